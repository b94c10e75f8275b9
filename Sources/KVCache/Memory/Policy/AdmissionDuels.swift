/// Chooses the admission lead, the uses a candidate from the window needs over the main
/// space's victim to take its place: 2 or 1.
///
/// The two leads disagree only on a candidate that leads the victim by exactly one use.
/// Each such decision opens a duel between the two keys; whichever key is used first
/// settles it: the candidate, and lead 1 (which admits it) would have hit; the victim, and
/// lead 2 (which keeps it) would have. A bounded score of the duels picks the lead.
///
/// - A loop or a back-and-forth scan settles duels for 2: a key just used leads every key
///   its pass has not reached yet, and those come back first (`lirs-loop`, `lirs-zigzag`).
/// - Recency settles them for 1: a key used twice lately comes back before an older one
///   (`web07` and `web12` at 4,000 entries, `lirs-cpp` at 122, `lirs-sprite`).
///
/// Lossy by design, and bounded: a duel lives in the two slots its keys' hashes choose, and
/// a newer duel takes a slot from an older one (which is then forgotten).
@usableFromInline
struct AdmissionDuels {
    /// The lead before any duel is settled: loops lose most under a lead of one, and recency
    /// patterns settle their duels quickly.
    static var initialLead: UInt8 { 2 }
    /// The score's bound either way: a change of pattern turns the lead after this many duels.
    /// A few would follow the order in which threads happen to run; with 8 threads replaying a
    /// trace, 32 keeps the hit ratio within 0.5 points of one thread's (4 does not).
    @usableFromInline static var scoreBound: Int { 32 }

    /// A slot: bit 0 occupied, bit 1 its key was the candidate, bits 2-31 the partner's slot,
    /// bits 32-63 its key's policy hash.
    @usableFromInline var slots: [UInt64]
    @usableFromInline let mask: UInt32
    /// Occupied slots: with none (a cache that only reads), a use costs one comparison.
    @usableFromInline var live = 0
    /// Duels settled for lead 1 (+1 each) and for lead 2 (−1), within ±`scoreBound`.
    @usableFromInline var score = 0
    /// The uses a candidate needs over the victim: 1 or 2.
    @usableFromInline var lead = Self.initialLead

    /// Duels for a cache of `capacity` entries (0: no count limit): a slot for each entry,
    /// from 256 to 4,096 slots (8 bytes each).
    init(capacity: Int) {
        var count = 256
        let wanted = capacity == 0 ? 1_024 : min(capacity, 4_096)
        while count < wanted { count *= 2 }
        slots = Array(repeating: 0, count: count)
        mask = UInt32(count - 1)
    }

    /// Opens a duel for a decision the two leads disagree on.
    @usableFromInline
    mutating func open(candidate: UInt32, victim: UInt32) {
        let candidateSlot = Int(candidate & mask), victimSlot = Int(victim & mask)
        guard candidateSlot != victimSlot else { return }
        forget(candidateSlot)
        forget(victimSlot)
        slots[candidateSlot] = UInt64(candidate) << 32 | UInt64(victimSlot) << 2 | 0b11
        slots[victimSlot] = UInt64(victim) << 32 | UInt64(candidateSlot) << 2 | 0b01
        live &+= 2
    }

    /// Empties `slot` and its partner's, if it holds a duel.
    @usableFromInline
    mutating func forget(_ slot: Int) {
        let entry = slots[slot]
        guard entry & 1 != 0 else { return }
        slots[slot] = 0
        slots[Int(truncatingIfNeeded: entry >> 2 & 0x3FFF_FFFF)] = 0
        live &-= 2
    }

    /// Whether the key whose policy hash is `hash` has an open duel.
    @inlinable
    func hasDuel(_ hash: UInt32) -> Bool {
        guard live > 0 else { return false }
        let entry = slots[Int(hash & mask)]
        return entry & 1 != 0 && UInt32(truncatingIfNeeded: entry >> 32) == hash
    }

    /// A use of the key whose policy hash is `hash`: settles its duel, if it has one.
    @inlinable
    mutating func noteUse(_ hash: UInt32) {
        guard hasDuel(hash) else { return }
        let slot = Int(hash & mask)
        settle(slot, candidateFirst: slots[slot] & 2 != 0)
    }

    @usableFromInline
    mutating func settle(_ slot: Int, candidateFirst: Bool) {
        forget(slot)
        score = candidateFirst ? min(score + 1, Self.scoreBound) : max(score - 1, -Self.scoreBound)
        if score > 0 { lead = 1 } else if score < 0 { lead = 2 }
    }

    /// The broken invariants, empty when there are none: every occupied slot's partner is
    /// occupied and points back, one of the two is the candidate, `live` counts them, and
    /// the lead is 1 or 2.
    func invariantViolations() -> [String] {
        var violations: [String] = []
        var occupied = 0
        for (slot, entry) in slots.enumerated() where entry & 1 != 0 {
            occupied += 1
            let partner = slots[Int(truncatingIfNeeded: entry >> 2 & 0x3FFF_FFFF) & Int(mask)]
            if partner & 1 == 0 || Int(truncatingIfNeeded: partner >> 2 & 0x3FFF_FFFF) != slot
                || (partner & 2) == (entry & 2) {
                violations.append("duel slot \(slot) has no partner pointing back")
            }
            if Int(UInt32(truncatingIfNeeded: entry >> 32) & mask) != slot {
                violations.append("duel slot \(slot) holds a hash of another slot")
            }
        }
        if occupied != live { violations.append("duels: \(live) live slots counted, \(occupied) occupied") }
        if lead != 1 && lead != 2 { violations.append("admission lead \(lead)") }
        if abs(score) > Self.scoreBound { violations.append("duel score \(score) out of bounds") }
        return violations
    }
}
