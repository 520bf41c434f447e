import FuzzDriver
import ODRFuzzEntries

// FuzzEntry.dotenv on every input libFuzzer makes (scripts/checks/fuzz builds and runs it).
FuzzDriver.run { data, count in
  FuzzEntry.dotenv.run(Array(UnsafeBufferPointer(start: data, count: count)))
  return 0
}
