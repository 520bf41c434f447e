// `odr-http`, the helper `odr` hands `odr http` to (installed under
// libexec/odr/): the same command line, with `odr http` run by APIClient
// over URLSession.
import ODRCommandLine
import ODRHTTPCommand

await CommandLineTool.main(http: URLSessionHTTPRunner())
