import FuzzDriver
import ODRFuzzEntries

// FuzzEntry.proxyRequest on every input libFuzzer makes (scripts/checks/fuzz builds and runs it).
FuzzDriver.run { data, count in
  FuzzEntry.proxyRequest.run(Array(UnsafeBufferPointer(start: data, count: count)))
  return 0
}
