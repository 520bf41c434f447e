/// Replaces every form of a set of secret values (``SecretForms``) in a
/// byte stream, chunk by chunk: `odr exec --mask` and the HTTP client's
/// redaction.
///
/// One pass over the bytes whatever the number of values: the forms are
/// compiled into one Aho–Corasick automaton, made a DFA over byte classes,
/// so each byte costs a table step. Every byte inside a match is replaced
/// (overlapping matches merge, so no tail of a longer form stays visible);
/// bytes that could still begin a match are held back until the next chunk
/// shows whether they do, or until ``flush()`` (`odr exec` calls it when the
/// command has written nothing for a moment: a prompt must show). Terminal
/// escape sequences (`ESC [ … m` colours, and two-byte `ESC x`) inside a
/// value do not hide it, and none before it does either: the bytes are
/// matched both with escape sequences left out and as they are, so a value
/// right after a bare `ESC [` (whose first bytes a terminal would take as
/// the sequence's, showing the rest) is masked whole.
///
/// Each value may have a replacement of its own (`odr exec --proxy` shows a
/// value as its placeholder); where matches of two values overlap, the
/// merged span takes the longer match's.
public struct SecretMasker: Sendable {
  /// What a match of each value is replaced with, by the automaton's value index.
  private let replacements: [[UInt8]]
  private let automaton: Automaton

  // Streaming state.
  private var state: UInt32 = 0
  /// The automaton's state over the raw bytes, escape sequences included.
  private var raw: UInt32 = 0
  private var pending: [UInt8] = []
  /// Absolute offset of `pending[0]` in the stream.
  private var base = 0
  /// Absolute offsets of the last `automaton.longest` bytes fed to the
  /// automaton (escape sequences are not), newest at `recentCount - 1`.
  private var recent: [Int]
  private var recentCount = 0
  /// Matched spans not written yet, absolute, in order, not overlapping,
  /// each with the replacement of its longest match.
  private var spans: [(start: Int, end: Int, replacement: Int, length: Int)] = []
  private var escape: UInt8 = 0  // 0 none, 1 after ESC, 2 inside CSI

  /// A masker for `values` (empty values are ignored), each replaced with `replacement`.
  public init(values: [String], replacement: String = "***") {
    self.init(replacing: values.map { ($0, replacement) })
  }

  /// A masker that replaces every form of each value with that value's
  /// replacement (empty values are ignored; a value given twice keeps its
  /// first replacement).
  public init(replacing pairs: [(value: String, replacement: String)]) {
    replacements = pairs.map { Array($0.replacement.utf8) }
    var patterns: [[UInt8]: Int] = [:]
    for (index, pair) in pairs.enumerated() {
      for form in SecretForms.of(pair.value) where patterns[form] == nil { patterns[form] = index }
    }
    automaton = Automaton(patterns: patterns)
    // A power of two, so the ring index is a mask.
    var size = 1
    while size < automaton.longest { size <<= 1 }
    recent = [Int](repeating: 0, count: size)
  }

  /// `text` with every form of the values replaced (one call, no stream).
  public static func redact(_ text: String, values: [String], replacement: String) -> String {
    var masker = SecretMasker(values: values, replacement: replacement)
    guard masker.automaton.longest > 0 else { return text }
    return String(decoding: masker.mask(Array(text.utf8)) + masker.finish(), as: UTF8.self)
  }

  /// The masked bytes that can be written now for `chunk`.
  public mutating func mask(_ chunk: some Collection<UInt8>) -> [UInt8] {
    guard automaton.longest > 0 else { return Array(chunk) }
    pending.append(contentsOf: chunk)
    let start = pending.count - chunk.count
    // The hot loop works on locals and raw buffers.
    var state = Int(self.state), raw = Int(self.raw), escape = self.escape, recentCount = self.recentCount
    let ringMask = recent.count - 1, base = self.base
    var found: [(start: Int, end: Int, replacement: Int)] = []
    let automaton = self.automaton
    let (matchLength, matchValue, byteClass, staysAtRoot) = (automaton.matchLength, automaton.matchValue, automaton.byteClass, automaton.staysAtRoot)
    recent.withUnsafeMutableBufferPointer { recent in
      pending.withUnsafeBufferPointer { bytes in
        var index = start
        let end = bytes.count
        while index < end {
          // At the root, bytes that start no form leave it there and need
          // no bookkeeping: skip them in a tight loop.
          if state == 0 && raw == 0 && escape == 0 {
            while index < end && staysAtRoot[Int(bytes[index])] { index &+= 1 }
            if index == end { break }
          }
          let byte = bytes[index]
          index &+= 1
          let offset = base &+ index &- 1
          let inEscape = escape != 0 || byte == 0x1b
          // Outside escape sequences the two streams agree (the usual case):
          // one step serves both.
          let same = !inEscape && raw == state
          if inEscape {
            escape = byte == 0x1b ? 1 : escape == 1 ? (byte == UInt8(ascii: "[") ? 2 : 0) : ((0x40...0x7e).contains(byte) ? 0 : 2)
          } else {
            state = automaton.step(state, Int(byteClass[Int(byte)]))
            recent[recentCount & ringMask] = offset
            recentCount &+= 1
            let length = Int(matchLength[state])
            if length > 0 { found.append((recent[(recentCount &- length) & ringMask], offset, Int(matchValue[state]))) }
          }
          if same {
            raw = state
          } else {
            raw = automaton.step(raw, Int(byteClass[Int(byte)]))
            let length = Int(matchLength[raw])
            if length > 0 { found.append((offset &- length &+ 1, offset, Int(matchValue[raw]))) }
          }
        }
      }
    }
    self.state = UInt32(state)
    self.raw = UInt32(raw)
    self.escape = escape
    self.recentCount = recentCount
    for span in found { addSpan(from: span.start, to: span.end, replacement: span.replacement) }
    // Bytes from here on may still be part of a match.
    let depth = Int(automaton.depth[state])
    var keepFrom = depth > 0 ? recent[(recentCount - depth) & ringMask] : base + pending.count
    keepFrom = min(keepFrom, base + pending.count - Int(automaton.depth[raw]))
    if let open = spans.first(where: { $0.end >= keepFrom }) { keepFrom = min(keepFrom, open.start) }
    // After a flush, a value may have begun in bytes already written.
    return emit(upTo: max(keepFrom, base))
  }

  /// How many bytes are held back (they may begin a value).
  public var heldCount: Int { pending.count }

  /// The bytes held back, written now: for a writer that has paused (a
  /// prompt, a `\r` progress line), so that they show. The stream goes on
  /// as before: if a value completes later, what is not yet written of it
  /// is masked.
  public mutating func flush() -> [UInt8] {
    emit(upTo: base + pending.count)
  }

  /// The rest, at the end of the stream.
  public mutating func finish() -> [UInt8] {
    let output = emit(upTo: base + pending.count)
    state = 0
    raw = 0
    escape = 0
    return output
  }

  private mutating func addSpan(from start: Int, to end: Int, replacement: Int) {
    let length = end - start + 1
    if let last = spans.last, start <= last.end {
      let (kept, keptLength) = length > last.length ? (replacement, length) : (last.replacement, last.length)
      spans[spans.count - 1] = (min(last.start, start), max(last.end, end), kept, keptLength)
    } else {
      spans.append((start, end, replacement, length))
    }
  }

  /// Writes the pending bytes before absolute offset `limit`, spans replaced.
  private mutating func emit(upTo limit: Int) -> [UInt8] {
    var output: [UInt8] = []
    output.reserveCapacity(limit - base)
    var cursor = base
    var done = 0
    pending.withUnsafeBufferPointer { bytes in
      for span in spans {
        guard span.end < limit else { break }
        // a span may begin before `base`, in bytes a flush already wrote
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[(cursor - base)..<(max(span.start, cursor) - base)]))
        output.append(contentsOf: replacements[span.replacement])
        cursor = span.end + 1
        done += 1
      }
      output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[(cursor - base)..<(limit - base)]))
    }
    spans.removeFirst(done)
    pending.removeFirst(limit - base)
    base = limit
    return output
  }
}

/// The forms as one Aho–Corasick automaton over byte classes. States near
/// the root (depth ≤ ``denseDepth``), where a log's bytes keep the automaton,
/// have full transition rows: one table step per byte. Deeper states — the
/// long, rarely entered paths of each form — keep only their edges and
/// failure link, so memory and set-up grow with the forms' total length, not
/// with it times the alphabet.
///
/// Immutable once built; its tables live in buffers of its own so the hot
/// loop reads them without bounds checks or copy-on-write checks.
private final class Automaton: @unchecked Sendable {
  static let denseDepth: UInt32 = 2

  let byteClass: UnsafeBufferPointer<UInt8>
  /// Bytes that leave the automaton at its root (and are not ESC).
  let staysAtRoot: UnsafeBufferPointer<Bool>
  let classCount: Int
  /// Dense rows, indexed by `row[state] * classCount + class`.
  let table: UnsafeBufferPointer<UInt32>
  /// A state's dense row, or -1.
  let row: UnsafeBufferPointer<Int32>
  /// Sparse states' edges: `edges[edgeStart[s]..<edgeStart[s + 1]]`, by class.
  let edgeStart: UnsafeBufferPointer<UInt32>
  let edgeClass: UnsafeBufferPointer<UInt8>
  let edgeTarget: UnsafeBufferPointer<UInt32>
  let fail: UnsafeBufferPointer<UInt32>
  let matchLength: UnsafeBufferPointer<UInt32>
  /// The value index (``SecretMasker``'s replacement) of each state's longest match.
  let matchValue: UnsafeBufferPointer<UInt32>
  let depth: UnsafeBufferPointer<UInt32>
  let longest: Int

  deinit {
    for buffer in [UnsafeRawBufferPointer(byteClass), UnsafeRawBufferPointer(staysAtRoot), UnsafeRawBufferPointer(table),
                   UnsafeRawBufferPointer(row), UnsafeRawBufferPointer(edgeStart), UnsafeRawBufferPointer(edgeClass),
                   UnsafeRawBufferPointer(edgeTarget), UnsafeRawBufferPointer(fail), UnsafeRawBufferPointer(matchLength),
                   UnsafeRawBufferPointer(matchValue),
                   UnsafeRawBufferPointer(depth)] {
      buffer.baseAddress.map { UnsafeMutableRawPointer(mutating: $0).deallocate() }
    }
  }

  /// A buffer of its own holding `array`.
  private static func own<T>(_ array: [T]) -> UnsafeBufferPointer<T> {
    let buffer = UnsafeMutableBufferPointer<T>.allocate(capacity: max(1, array.count))
    _ = buffer.initialize(from: array)
    return UnsafeBufferPointer(rebasing: buffer[0..<array.count])
  }

  /// The state after `state` reads a byte of class `c`.
  @inline(__always)
  func step(_ state: Int, _ c: Int) -> Int {
    var s = state
    while true {
      let r = Int(row[s])
      if r >= 0 { return Int(table[r &* classCount &+ c]) }
      var e = Int(edgeStart[s])
      let end = Int(edgeStart[s &+ 1])
      while e < end {
        if Int(edgeClass[e]) == c { return Int(edgeTarget[e]) }
        e &+= 1
      }
      s = Int(fail[s])
    }
  }

  /// `patterns`: each form and the index of the value it is a form of.
  init(patterns: [[UInt8]: Int]) {
    // Bytes no form contains share class 0.
    var classes = [UInt8](repeating: 0, count: 256)
    var count = 1
    for byte in Set(patterns.keys.joined()).sorted() {
      classes[Int(byte)] = UInt8(count)
      count += 1
    }
    classCount = count
    byteClass = Self.own(classes)
    longest = patterns.keys.map(\.count).max() ?? 0
    // The trie, built from the forms in sorted order: each shares a prefix
    // with the one before, so no lookups are needed. Flat arrays throughout.
    let sorted = patterns.map { (form: $0.key.map { classes[Int($0)] }, value: $0.value) }.sorted { $0.form.lexicographicallyPrecedes($1.form) }
    var depths: [UInt32] = [0], terminal: [UInt32] = [0], terminalValue: [UInt32] = [0]
    var parent: [UInt32] = [0], label: [UInt8] = [0]
    var path: [Int] = [0]  // the previous form's states
    var previous: [UInt8] = []
    for (form, value) in sorted {
      var shared = 0
      while shared < min(form.count, previous.count) && form[shared] == previous[shared] { shared += 1 }
      path.removeLast(path.count - shared - 1)
      for c in form[shared...] {
        parent.append(UInt32(path.last!))
        label.append(c)
        depths.append(UInt32(path.count))
        terminal.append(0)
        terminalValue.append(0)
        path.append(depths.count - 1)
      }
      terminal[path.last!] = UInt32(form.count)
      terminalValue[path.last!] = UInt32(value)
      previous = form
    }
    let states = depths.count
    // Children as compressed rows (counting sort by parent; classes stay in order).
    var childStart = [Int](repeating: 0, count: states + 1)
    for node in 1..<states { childStart[Int(parent[node]) + 1] += 1 }
    for node in 0..<states { childStart[node + 1] += childStart[node] }
    var childOf = [UInt32](repeating: 0, count: max(0, states - 1))
    var fill = childStart
    for node in 1..<max(1, states) {
      childOf[fill[Int(parent[node])]] = UInt32(node)
      fill[Int(parent[node])] += 1
    }
    // Breadth-first order: by depth.
    let order = (0..<states).sorted { depths[$0] < depths[$1] }
    // Dense rows for shallow states, edge lists for deep ones.
    var row = [Int32](repeating: -1, count: states)
    var rows = 0
    var edgeStart = [UInt32](repeating: 0, count: states + 1)
    var edgeClass: [UInt8] = [], edgeTarget: [UInt32] = []
    for node in 0..<states {
      edgeStart[node] = UInt32(edgeClass.count)
      if depths[node] <= Self.denseDepth {
        row[node] = Int32(rows)
        rows += 1
      } else {
        for k in childStart[node]..<childStart[node + 1] {
          edgeClass.append(label[Int(childOf[k])])
          edgeTarget.append(childOf[k])
        }
      }
    }
    edgeStart[states] = UInt32(edgeClass.count)
    self.row = Self.own(row)
    self.edgeStart = Self.own(edgeStart)
    self.edgeClass = Self.own(edgeClass)
    self.edgeTarget = Self.own(edgeTarget)
    // Failure links and dense rows, breadth first: each uses only states
    // shallower than the one it is for.
    var fail = [UInt32](repeating: 0, count: states)
    var table = [UInt32](repeating: 0, count: rows * count)
    var matches = terminal, matchValues = terminalValue
    func step(_ state: Int, _ c: Int) -> Int {
      var s = state
      while true {
        if row[s] >= 0 { return Int(table[Int(row[s]) * count + c]) }
        if let e = (Int(edgeStart[s])..<Int(edgeStart[s + 1])).first(where: { Int(edgeClass[$0]) == c }) { return Int(edgeTarget[e]) }
        s = Int(fail[s])
      }
    }
    for node in order {
      if node != 0 && matches[node] == 0 { (matches[node], matchValues[node]) = (matches[Int(fail[node])], matchValues[Int(fail[node])]) }
      let kids = childOf[childStart[node]..<childStart[node + 1]]
      for child in kids {
        fail[Int(child)] = node == 0 ? 0 : UInt32(step(Int(fail[node]), Int(label[Int(child)])))
      }
      if row[node] >= 0 {
        let base = Int(row[node]) * count
        for c in 0..<count {
          table[base + c] = node == 0 ? 0 : UInt32(step(Int(fail[node]), c))
        }
        for child in kids { table[base + Int(label[Int(child)])] = child }
      }
    }
    self.fail = Self.own(fail)
    self.table = Self.own(table)
    self.matchLength = Self.own(matches)
    self.matchValue = Self.own(matchValues)
    self.depth = Self.own(depths)
    staysAtRoot = Self.own((0..<256).map { byte in byte != 0x1b && table[Int(classes[byte])] == 0 })
  }
}
