// What an app needs, with one import: the provider and its keyring store,
// APIClient and URLPolicy, the trust types a pinned key needs, and the
// configuration shared with `odr`.
@_exported public import ODRBase
@_exported public import ODRConfiguration
@_exported public import ODRKeyring
@_exported public import ODRKeys
@_exported public import ODRNetworking
@_exported public import ODRResources
@_exported public import ODRTransports
@_exported public import ODRTrust
@_exported public import ODRTrustState
@_exported public import ODRCatalog
