public import ArgumentParser
public import ODRCI

/// `--format shell|dotenv|json|github|github-output|gitlab`, with the cases listed in help.
extension EnvFormat: ExpressibleByArgument {}
