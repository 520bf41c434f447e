// The lean `odr`: keys, publishing and file:// resources. It does not link
// FoundationNetworking (libcurl costs ~8 ms at every start); commands given
// an http(s) catalog are handed to the sibling `odr-net` executable.
import ODRCommandLine

CommandLineTool.runHotPath()
await CommandLineTool.main(network: nil)
