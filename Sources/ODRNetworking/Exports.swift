// URLPolicy, URLCheck and APIError live in the small ODRURL module (`odr`
// checks URLs and maps errors to exit codes without URLSession);
// they are part of APIClient's API, so importing ODRNetworking brings them too.
@_exported public import ODRURL
