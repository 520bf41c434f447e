public import ArgumentParser
public import ODRCI

/// `--format shell|dotenv|json|github|gitlab`, with the cases listed in help.
extension EnvFormat: ExpressibleByArgument {}
