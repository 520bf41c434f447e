// URLPolicy and URLCheck live in the small ODRURL module (the lean `odr`
// checks URLs without an HTTP stack); they are part of APIClient's API, so
// importing ODRNetworking brings them too.
@_exported public import ODRURL
