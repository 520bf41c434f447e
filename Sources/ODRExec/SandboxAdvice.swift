/// What to do when the sandbox of `odr exec --proxy` cannot be made, from
/// what bubblewrap said: the cause in words, and the fix for the machine.
public enum SandboxAdvice {
  /// bubblewrap is not installed (or not on PATH).
  public static let missingBubblewrap = """
    odr exec --proxy runs the command in a sandbox made by bubblewrap (bwrap), which is not installed: \
    install it (Debian, Ubuntu: `sudo apt install bubblewrap`; Fedora: `sudo dnf install bubblewrap`; Arch: `sudo pacman -S bubblewrap`), \
    or pass --no-sandbox to run the command without it, knowingly.
    """

  /// The advice after bubblewrap's own words `said`.
  public static func forFailure(_ said: String) -> String {
    let namespaces = ["namespace", "uid map", "setgroups", "Operation not permitted", "No space left on device"]
    guard namespaces.contains(where: { said.contains($0) }) else {
      return "Pass --no-sandbox to run the command without a sandbox, knowingly (it can then reach what you can)."
    }
    return """
      User namespaces are not available to bubblewrap here. Where user.max_user_namespaces is 0, raise it (`sudo sysctl user.max_user_namespaces=15000`). \
      On Ubuntu 23.10 and later, use the distribution's bubblewrap package: its AppArmor profile lets it make namespaces. \
      In a Docker container or devcontainer, Docker's default seccomp profile forbids them: run the container with \
      `--security-opt seccomp=unconfined` (devcontainer.json: "runArgs": ["--security-opt", "seccomp=unconfined"]), or, where the \
      container itself is the boundary and holds no keyring, pass --no-sandbox knowingly.
      """
  }
}
