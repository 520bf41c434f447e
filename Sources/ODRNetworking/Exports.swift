// URLPolicy, URLCheck and APIError live in the small ODRURL module (the lean
// `odr` checks URLs and maps errors to exit codes without an HTTP stack);
// they are part of APIClient's API, so importing ODRNetworking brings them too.
@_exported public import ODRURL
