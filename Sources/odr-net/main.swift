// `odr` with the HTTP stacks: http(s) catalogs (AsyncHTTPClient), `odr http`
// (ODRNetworking over URLSession). The lean `odr` execs
// this executable (installed next to it) for those; it can be run directly.
import ODRCommandLine

await CommandLineTool.main(network: NetCommands())
