// `odr` with HTTP(S) catalogs. `odr` execs this executable (installed next to
// it) for commands whose catalog is an http(s) URL; it can also be run directly.
import ODRCommandLine
import ODRHTTP

await CommandLineTool.main(network: { HTTPTransport() })
