// `odr-search-once SERVICE`: a process whose whole job is one keyring search
// of a service (values and metadata, as `odr exec` does) — the cold "one
// keyring search" that benchmark (f) subtracts. Same runtime and library as
// odr, nothing else.
import ODRKeyring

let store = try SecretServiceStore(service: CommandLine.arguments[1])
guard try await !store.valuesAndRecords().isEmpty else { fatalError("no keys") }
