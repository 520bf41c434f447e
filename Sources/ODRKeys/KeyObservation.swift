public import ODRBase

/// An observation of a provider's keys or states: an `AsyncSequence` that
/// ends when its token is cancelled or its task ends (seed 002).
public typealias KeyObservation<Element: Sendable> = ObservationStream<Element>
