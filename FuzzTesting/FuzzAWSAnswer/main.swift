import FuzzDriver
import ODRFuzzEntries

// FuzzEntry.awsAnswer on every input libFuzzer makes (scripts/checks/fuzz builds and runs it).
FuzzDriver.run { data, count in
  FuzzEntry.awsAnswer.run(Array(UnsafeBufferPointer(start: data, count: count)))
  return 0
}
