import ODRBase
import ArgumentParser
import FoundationEssentials
import ODRExec
import ODRSigning

extension ODR {
  /// `odr sign FILE`: a detached OpenPGP signature made with an odr
  /// signing key, for files people check with the tools their system has
  /// (`gpgv`, `sqv`), such as a release's SHA256SUMS.
  struct Sign: ContextualCommand {
    static let configuration = CommandConfiguration(
      abstract: "Sign a file with a signing key as OpenPGP, so gpgv or sqv can check it.",
      discussion: """
        Writes FILE.sig, a detached OpenPGP signature (Ed25519, SHA-256), and with --certificate the signing key's public half as an OpenPGP certificate. Its fingerprint depends on the key alone, so it stays the same from one release to the next. Anyone checks the file with a tool every Debian machine has (apt verifies its archives with one of them):

          gpgv --keyring ./odr-release.pgp SHA256SUMS.sig SHA256SUMS
          sqv --keyring odr-release.pgp SHA256SUMS.sig SHA256SUMS

        Example:
          odr sign dist/SHA256SUMS --sign release --certificate dist/odr-release.pgp
        """)

    @Argument(help: ArgumentHelp("The file to sign.", valueName: "file"))
    var file: String

    @OptionGroup var signing: SigningKeyOptions

    @Option(name: .shortAndLong, help: ArgumentHelp("Where the signature goes (default FILE.sig).", valueName: "file"), completion: .file())
    var output: String?

    @Option(help: ArgumentHelp("Also write the public key as an OpenPGP certificate (binary) to this file.", valueName: "file"), completion: .file())
    var certificate: String?

    @Option(help: ArgumentHelp("The name the certificate carries.", valueName: "text"))
    var userID = "odr signing key"

    func run(_ context: CommandContext) async throws {
      let keys = try await signing.keys(context)
      guard let key = keys.first else {
        throw ValidationError("Name the signing key: --sign NAME, --sign-key-file FILE or $ODR_SIGNING_KEY.")
      }
      guard keys.count == 1 else { throw ValidationError("odr sign signs with one key; give --sign or --sign-key-file once.") }
      guard !key.isPostQuantum else {
        throw CommandFailure("\(key.verifyingKey.shortDescription) is a post-quantum (Ed25519 + ML-DSA-65) key; odr sign writes OpenPGP signatures for gpgv and sqv, which check Ed25519 only here (OpenPGP's post-quantum signatures are not in them yet). Sign files with an Ed25519 key of their own (odr signing-key new NAME); odr never reuses half of a catalog key for another format.", code: 2)
      }
      guard let data = FileManager.default.contents(atPath: context.path(file)) else { throw CommandFailure("Cannot read '\(file)'.", code: 1) }
      let signer = OpenPGPSignature(key: key, userID: userID)
      let now = context.now()
      try write(try signer.detachedSignature(of: data, at: now), to: context.path(output ?? file + ".sig"))
      if let certificate { try write(try signer.certificate(at: now), to: context.path(certificate)) }
      context.output.error("signed \(file) with \(key.verifyingKey) (OpenPGP fingerprint \(signer.fingerprint))")
    }

    private func write(_ data: Data, to path: String) throws {
      do { try data.write(to: URL(filePath: path), options: .atomic) } catch {
        throw ExecError(.io, "Cannot write '\(path)': \(error).")
      }
    }
  }
}
