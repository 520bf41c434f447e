// `odr-search-once SERVICE`: a process whose whole job is one keyring search
// of a service (values and metadata, as `odr exec` does) — the cold "one
// keyring search" that benchmark (f) subtracts. `odr-search-once SERVICE
// KEY`: the two lookups `odr get KEY` makes (the key, then the import
// journal, in one hop) — the start-up floor of benchmark (a). Same runtime
// and library as odr, nothing else.
import ODRKeyring

let store = try SecretServiceStore(service: CommandLine.arguments[1])
if CommandLine.arguments.count > 2 {
  guard try await store.valueAndJournal(for: CommandLine.arguments[2]).value != nil else { fatalError("no such key") }
} else {
  guard try await !store.valuesAndRecords().isEmpty else { fatalError("no keys") }
}
