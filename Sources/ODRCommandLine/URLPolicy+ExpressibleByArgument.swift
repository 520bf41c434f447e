public import ArgumentParser
public import ODRURL

/// `--policy strict|encoding|consistent`, with the cases listed in help.
extension URLPolicy: ExpressibleByArgument {}
