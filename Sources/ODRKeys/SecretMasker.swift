/// Replaces every form of a set of secret values (``SecretForms``) in a
/// byte stream, chunk by chunk: `odr exec --mask` and the HTTP client's
/// redaction.
///
/// One pass over the bytes whatever the number of values: the forms are
/// compiled into one Aho–Corasick automaton, made a DFA over byte classes,
/// so each byte costs a table step. Every byte inside a match is replaced
/// (overlapping matches merge, so no tail of a longer form stays visible);
/// bytes that could still begin a match are held back until the next chunk
/// shows whether they do. Terminal escape sequences (`ESC [ … m` colours,
/// and two-byte `ESC x`) inside a value do not hide it.
public struct SecretMasker: Sendable {
  /// What each match is replaced with.
  public let replacement: [UInt8]
  private let automaton: Automaton

  // Streaming state.
  private var state: UInt32 = 0
  private var pending: [UInt8] = []
  /// Absolute offset of `pending[0]` in the stream.
  private var base = 0
  /// Absolute offsets of the last `automaton.longest` bytes fed to the
  /// automaton (escape sequences are not), newest at `recentCount - 1`.
  private var recent: [Int]
  private var recentCount = 0
  /// Matched spans not written yet, absolute, in order, not overlapping.
  private var spans: [(start: Int, end: Int)] = []
  private var escape: UInt8 = 0  // 0 none, 1 after ESC, 2 inside CSI

  /// A masker for `values` (empty values are ignored).
  public init(values: [String], replacement: String = "***") {
    self.replacement = Array(replacement.utf8)
    automaton = Automaton(patterns: values.reduce(into: Set<[UInt8]>()) { $0.formUnion(SecretForms.of($1)) })
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
    var state = Int(self.state), escape = self.escape, recentCount = self.recentCount
    let ringMask = recent.count - 1, base = self.base
    var found: [(start: Int, end: Int)] = []
    let automaton = self.automaton
    automaton.matchLength.withUnsafeBufferPointer { matchLength in
      automaton.byteClass.withUnsafeBufferPointer { byteClass in
        automaton.staysAtRoot.withUnsafeBufferPointer { staysAtRoot in
          recent.withUnsafeMutableBufferPointer { recent in
            pending.withUnsafeBufferPointer { bytes in
              var index = start
              let end = bytes.count
              while index < end {
                // At the root, bytes that start no form leave it there and
                // need no bookkeeping: skip them in a tight loop.
                if state == 0 && escape == 0 {
                  while index < end && staysAtRoot[Int(bytes[index])] { index &+= 1 }
                  if index == end { break }
                }
                let byte = bytes[index]
                index &+= 1
                if escape != 0 || byte == 0x1b {
                  escape = byte == 0x1b ? 1 : escape == 1 ? (byte == UInt8(ascii: "[") ? 2 : 0) : ((0x40...0x7e).contains(byte) ? 0 : 2)
                  continue
                }
                state = automaton.step(state, Int(byteClass[Int(byte)]))
                recent[recentCount & ringMask] = base &+ index &- 1
                recentCount &+= 1
                let length = Int(matchLength[state])
                if length > 0 { found.append((recent[(recentCount &- length) & ringMask], base &+ index &- 1)) }
              }
            }
          }
        }
      }
    }
    self.state = UInt32(state)
    self.escape = escape
    self.recentCount = recentCount
    for span in found { addSpan(from: span.start, to: span.end) }
    // Bytes from here on may still be part of a match.
    let depth = Int(automaton.depth[state])
    var keepFrom = depth > 0 ? recent[(recentCount - depth) & ringMask] : base + pending.count
    if let open = spans.first(where: { $0.end >= keepFrom }) { keepFrom = min(keepFrom, open.start) }
    return emit(upTo: keepFrom)
  }

  /// The rest, at the end of the stream.
  public mutating func finish() -> [UInt8] {
    let output = emit(upTo: base + pending.count)
    state = 0
    escape = 0
    return output
  }

  private mutating func addSpan(from start: Int, to end: Int) {
    if let last = spans.last, start <= last.end {
      spans[spans.count - 1] = (min(last.start, start), max(last.end, end))
    } else {
      spans.append((start, end))
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
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[(cursor - base)..<(span.start - base)]))
        output.append(contentsOf: replacement)
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
private struct Automaton: Sendable {
  static let denseDepth: UInt32 = 2

  let byteClass: [UInt8]
  /// Bytes that leave the automaton at its root (and are not ESC).
  let staysAtRoot: [Bool]
  let classCount: Int
  /// Dense rows, indexed by `row[state] * classCount + class`.
  let table: [UInt32]
  /// A state's dense row, or -1.
  let row: [Int32]
  /// Sparse states' edges: `edges[edgeStart[s]..<edgeStart[s + 1]]`, by class.
  let edgeStart: [UInt32]
  let edgeClass: [UInt8]
  let edgeTarget: [UInt32]
  let fail: [UInt32]
  let matchLength: [UInt32]
  let depth: [UInt32]
  let longest: Int

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

  init(patterns: Set<[UInt8]>) {
    // Bytes no form contains share class 0.
    var classes = [UInt8](repeating: 0, count: 256)
    var count = 1
    for byte in Set(patterns.joined()).sorted() {
      classes[Int(byte)] = UInt8(count)
      count += 1
    }
    classCount = count
    longest = patterns.map(\.count).max() ?? 0
    // The trie, states numbered breadth first (parents before children).
    var children: [[(UInt8, UInt32)]] = [[]]
    var depths: [UInt32] = [0]
    var terminal: [UInt32] = [0]
    for pattern in patterns {
      var node = 0
      for byte in pattern {
        let c = classes[Int(byte)]
        if let next = children[node].first(where: { $0.0 == c })?.1 { node = Int(next); continue }
        children.append([])
        depths.append(depths[node] + 1)
        terminal.append(0)
        children[node].append((c, UInt32(children.count - 1)))
        node = children.count - 1
      }
      terminal[node] = UInt32(pattern.count)
    }
    var order: [Int] = [0]
    var head = 0
    while head < order.count {
      order += children[order[head]].map { Int($0.1) }
      head += 1
    }
    // Dense rows for shallow states, edge lists for deep ones.
    var row = [Int32](repeating: -1, count: children.count)
    var rows = 0
    var edgeStart = [UInt32](repeating: 0, count: children.count + 1)
    var edgeClass: [UInt8] = [], edgeTarget: [UInt32] = []
    for node in 0..<children.count {
      edgeStart[node] = UInt32(edgeClass.count)
      if depths[node] <= Self.denseDepth {
        row[node] = Int32(rows)
        rows += 1
      } else {
        for (c, child) in children[node].sorted(by: { $0.0 < $1.0 }) {
          edgeClass.append(c)
          edgeTarget.append(child)
        }
      }
    }
    edgeStart[children.count] = UInt32(edgeClass.count)
    self.row = row
    self.edgeStart = edgeStart
    self.edgeClass = edgeClass
    self.edgeTarget = edgeTarget
    self.byteClass = classes
    // Failure links and dense rows, breadth first: each uses only states
    // shallower than the one it is for.
    var fail = [UInt32](repeating: 0, count: children.count)
    var table = [UInt32](repeating: 0, count: rows * count)
    var matches = terminal
    func step(_ state: Int, _ c: Int) -> Int {
      var s = state
      while true {
        if row[s] >= 0 { return Int(table[Int(row[s]) * count + c]) }
        if let e = (Int(edgeStart[s])..<Int(edgeStart[s + 1])).first(where: { Int(edgeClass[$0]) == c }) { return Int(edgeTarget[e]) }
        s = Int(fail[s])
      }
    }
    for node in order {
      if node != 0 && matches[node] == 0 { matches[node] = matches[Int(fail[node])] }
      for (c, child) in children[node] {
        fail[Int(child)] = node == 0 ? 0 : UInt32(step(Int(fail[node]), Int(c)))
      }
      if row[node] >= 0 {
        let base = Int(row[node]) * count
        for c in 0..<count {
          if let child = children[node].first(where: { Int($0.0) == c })?.1 {
            table[base + c] = child
          } else {
            table[base + c] = node == 0 ? 0 : UInt32(step(Int(fail[node]), c))
          }
        }
      }
    }
    self.fail = fail
    self.table = table
    self.matchLength = matches
    self.depth = depths
    staysAtRoot = (0..<256).map { byte in byte != 0x1b && table[Int(classes[byte])] == 0 }
  }
}
