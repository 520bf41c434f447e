import FuzzDriver
import ODRFuzzEntries

// FuzzEntry.signatureLines on every input libFuzzer makes (scripts/checks/fuzz builds and runs it).
FuzzDriver.run { data, count in
  FuzzEntry.signatureLines.run(Array(UnsafeBufferPointer(start: data, count: count)))
  return 0
}
