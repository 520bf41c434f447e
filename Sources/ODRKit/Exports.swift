// What an app needs, with one import, and nothing of odr's plumbing: the
// key provider and its stores, APIClient and URLPolicy, the trust types a
// pinned key needs, the configuration shared with `odr`, on-demand
// resources, and the errors all of these throw (each an ``ODRError``, but
// `CancellationError` when the task is cancelled).
// Only these names are exported; the modules behind them stay odr's own.
@_exported public import protocol ODRBase.ODRError
@_exported public import struct ODRBase.DomainError
@_exported public import struct ODRBase.ErrorCode

@_exported public import class ODRKeys.APIKeyProvider
@_exported public import struct ODRKeyFormat.APIKey
@_exported public import struct ODRKeyFormat.KeyMetadata
@_exported public import typealias ODRKeyFormat.KeysError

@_exported public import protocol ODRKeyring.SecretStore
@_exported public import struct ODRKeyring.SecretServiceStore
@_exported public import class ODRKeyring.MemoryStore
@_exported public import struct ODRKeyring.KernelKeyringStore
@_exported public import struct ODRKeyring.KeyringError

@_exported public import class ODRNetworking.APIClient
@_exported public import struct ODRNetworking.APIRequest
@_exported public import struct ODRNetworking.APIResponse
@_exported public import struct ODRNetworking.RetryPolicy
@_exported public import struct ODRNetworking.URLSessionTransport
@_exported public import enum ODRURL.URLPolicy
@_exported public import struct ODRURL.URLPolicyError
@_exported public import struct ODRURL.APIError

@_exported public import struct ODRConfiguration.ODRConfiguration
@_exported public import struct ODRConfiguration.ConfigurationError
@_exported public import protocol ODRConfiguration.CatalogTokenSource

@_exported public import struct ODRTrust.TrustPolicy
@_exported public import struct ODRSigning.VerifyingKey
@_exported public import typealias ODRSigning.TrustError
@_exported public import struct ODRAge.AgeIdentity

@_exported public import struct ODRResources.ResourceCatalog
@_exported public import class ODRResources.ResourceRequest
@_exported public import typealias ODRCatalog.ResourceError
@_exported public import struct ODRTransports.NetworkLocation
@_exported public import protocol ODRTransports.BlobTransport
