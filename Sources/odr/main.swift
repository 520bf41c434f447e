// `odr`: every command in this one process, downloads and uploads over
// odr's HTTP client included. Only `odr http` (URLSession, so Foundation
// networking and libcurl) is handed to the helper, libexec/odr/odr-http.
import ODRCommandLine

CommandLineTool.runHotPath()
await CommandLineTool.main(http: nil)
