import ArgumentParser
import ODRBase
import FoundationEssentials
import ODRCatalog
import ODRResources

extension ODR {
  /// `odr begin TAG…`: download, verify and pin tags.
  struct Begin: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "begin",
      abstract: "Make tags available: download what is missing, verify it, and pin it.",
      discussion: """
        Like NSBundleResourceRequest.beginAccessingResources. Each `odr begin` adds one pin per tag, held by the process that ran odr (its parent: your shell or script) or by --owner; `odr end` removes one, from any process. When the holder exits without `odr end`, its pins are reclaimed. With --if-present nothing is downloaded: the tags are pinned only if they are already on disk (exit 3 otherwise).

        Example:
          odr begin Onboarding Level2 --catalog /srv/odr
          ODR_CATALOG=file:///srv/odr odr begin Level2 --if-present
        """
    )

    @OptionGroup var catalog: CatalogOptions

    @Argument(help: "The tags to access.", completion: Completions.tags)
    var tags: [String]

    @Flag(help: "Only pin tags already on disk; never download.")
    var ifPresent = false

    @Option(help: ArgumentHelp("The process that holds the pins (default: odr's parent).", valueName: "pid"))
    var owner: Int32?

    @Option(help: ArgumentHelp("Loading priority, 0…1 or urgent, among this process's downloads.", valueName: "priority"))
    var priority: String?

    @OptionGroup var reporting: OutputOptions

    /// `--json`: what is now available and who holds its pins.
    struct Report: Encodable {
      struct Tag: Encodable { let name: String, files: Int, bytes: Int64 }
      let bundle: String, version: Int, store: String
      /// The process holding the pins just taken.
      let holder: Int32
      let tags: [Tag]
    }

    func validate() throws {
      if tags.isEmpty { throw ValidationError("Name at least one tag.") }
      _ = try loadingPriority()
    }

    /// --priority as a loading priority.
    private func loadingPriority() throws -> Double {
      guard let priority else { return 0.5 }
      if priority == "urgent" { return ResourceRequest.urgent }
      guard let value = Double(priority), (0...1).contains(value) else {
        throw ValidationError("--priority is a number between 0 and 1, or urgent.")
      }
      return value
    }

    func run(_ context: CommandContext) async throws {
      let resources = try await catalog.load(context)
      let request = try ResourceRequest(tags: Set(tags), catalog: resources, holder: owner ?? context.pinHolder)
      request.loadingPriority = try loadingPriority()
      try await access(request, resources, context)  // pins before it downloads; a failure unpins
      request.keepLeaseForHolder()
      let report = Report(bundle: resources.catalog.bundle, version: resources.catalog.version, store: resources.store.root.path,
                          holder: owner ?? context.pinHolder,
                          tags: try tags.map { try Report.Tag(name: $0, files: resources.tag($0).files.count, bytes: resources.tag($0).size) })
      try reporting.print(report, on: context.output) {
        let bytes = report.tags.reduce(Int64(0)) { $0 + $1.bytes }
        context.output.error("\(tags.joined(separator: ", ")): available and pinned (\(ByteSize.format(bytes)) in \(report.store))")
      }
    }

    private func access(_ request: ResourceRequest, _ resources: ResourceCatalog, _ context: CommandContext) async throws {
      if ifPresent {
        guard request.conditionallyBeginAccessing() else {
          throw ResourceError(.notFound, "Not all of \(tags.joined(separator: ", ")) is on disk; `odr begin \(tags.joined(separator: " "))` downloads it.")
        }
        // purge order only: never fails the pin just taken
        await droppingAsync(.bestEffort) { try await resources.store.usage.touch(tags) }
      } else {
        let bar = ProgressBar(tags: tags, quiet: !reporting.isForPeople, context)
        do {
          try await Interruption.cancelling(if: context.handlesSignals) { try await request.beginAccessing(observing: bar.observer) }
          bar.finish()
        } catch let interruption as Interruption {
          bar.finish()
          let at = bar.latest.map { " at \(ProgressBar.mebibytes($0.bytesCompleted)) of \(ProgressBar.mebibytes($0.bytesTotal)) MiB" } ?? ""
          let kept = resources.store.resumableBytes(of: try tags.flatMap { try resources.tag($0).files })
          let again = "`odr begin \(tags.joined(separator: " "))`"
          let next = kept > 0 ? "\(again) resumes from the \(ProgressBar.mebibytes(kept)) MiB kept" : "\(again) downloads it again (the server gave nothing to resume from)"
          throw CommandFailure("interrupted\(at); nothing was pinned. \(next).", code: interruption.exitCode)
        } catch {
          bar.finish()
          throw error
        }
      }
    }
  }

  /// `odr end TAG…`: unpin tags.
  struct End: ContextualCommand {
    static let configuration = CommandConfiguration(
      commandName: "end",
      abstract: "End access to tags: remove one pin each; unpinned tags may be purged later.",
      discussion: """
        Example:
          odr end Onboarding --catalog /srv/odr
        """
    )

    @OptionGroup var catalog: CatalogOptions

    @Argument(help: "The tags to end access to.", completion: Completions.tags)
    var tags: [String]

    @Option(help: ArgumentHelp("Prefer a pin held by this process (default: odr's parent); else the oldest.", valueName: "pid"))
    var owner: Int32?

    @Flag(name: .shortAndLong, help: "Print nothing on success.")
    var quiet = false

    func validate() throws {
      if tags.isEmpty { throw ValidationError("Name at least one tag.") }
    }

    func run(_ context: CommandContext) async throws {
      let resources = try await catalog.loadFromDisk(context)
      for tag in tags { _ = try resources.tag(tag) }
      let unpinned = try await resources.store.pins.unpin(tags, owner: owner ?? context.pinHolder)
      if !unpinned.isEmpty { context.output.error("\(unpinned.joined(separator: ", ")) had no pin; nothing to end.") }
      let ended = tags.filter { !unpinned.contains($0) }
      guard !quiet, !ended.isEmpty else { return }
      // for the message only: the pins were ended above
      let leases = (dropping(.messageOnly) { try resources.store.pins.leases() }) ?? []
      let left = ended.map { tag in
        let count = leases.filter { $0.tag == tag }.count
        return "\(tag) (\(count == 0 ? "no pin left: purge may remove it" : "\(count) pin\(count == 1 ? "" : "s") left"))"
      }
      context.output.error("ended access to \(left.joined(separator: ", "))")
    }
  }
}
