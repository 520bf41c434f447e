public import ArgumentParser
public import ODRExec

/// `--format shell|dotenv|json|github|github-output|gitlab`, with the cases listed in help.
extension EnvFormat: ExpressibleByArgument {}
