import FuzzDriver
import ODRFuzzEntries

// FuzzEntry.s3Listing on every input libFuzzer makes (scripts/checks/fuzz builds and runs it).
FuzzDriver.run { data, count in
  FuzzEntry.s3Listing.run(Array(UnsafeBufferPointer(start: data, count: count)))
  return 0
}
