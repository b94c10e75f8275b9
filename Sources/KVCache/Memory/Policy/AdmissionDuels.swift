/// Chooses the admission lead, the uses a candidate from the window needs over the main
/// space's victim to take its place: 1, 2 or 3.
///
/// Two neighbouring leads disagree only on a candidate that leads the victim by exactly the
/// smaller of them. Each such decision opens a duel between the two keys; whichever key is
/// used first settles it: the candidate, and the smaller lead (which admits it) would have
/// hit; the victim, and the larger (which keeps it) would have. A bounded score of the duels
/// of each margin picks the lead.
///
/// - Margin 1 (lead 1 or 2). A loop or a back-and-forth scan settles duels for 2: a key just
///   used leads every key its pass has not reached yet, and those come back first
///   (`lirs-loop`, `lirs-zigzag`). Recency settles them for 1: a key used twice lately comes
///   back before an older one (`web07` and `web12` at 4,000 entries, `lirs-cpp` at 122,
///   `lirs-sprite`).
/// - Margin 2 (lead 2 or 3), counted only while margin 1 chooses 2. After the sketch halves
///   its counts, a key used since leads the main space's keys, last used before, by two: a
///   back-and-forth scan uses the keys at its turn twice in a row, and lead 2 lets them
///   displace keys the pass reaches next (`lirs-zigzag` at 500 entries: about 800
///   admissions, each a hit lost). Those duels settle for 3.
///
/// Lossy by design, and bounded: a duel lives in the two slots its keys' hashes choose, in
/// its margin's table, and a newer duel takes a slot from an older one of its margin (which
/// is then forgotten), except from a victim's first duel. The margins do not share slots: one-use duels open on most
/// admissions where counts are low, and would forget every two-use duel before it settles
/// (`lirs-zigzag` at 200 entries, in the order 8 threads ran it: 7.9 % hits, not 9.4 %).
@usableFromInline
struct AdmissionDuels {
    /// The lead before any duel is settled: loops lose most under a lead of one, and recency
    /// patterns settle their duels quickly.
    static var initialLead: UInt8 { 2 }
    /// The score's bound either way: a change of pattern turns the lead after this many duels.
    /// A few would follow the order in which threads happen to run; with 8 threads replaying a
    /// trace, 32 keeps the hit ratio within 0.5 points of one thread's (4 does not).
    @usableFromInline static var scoreBound: Int { 32 }
    /// The two-use duels the victims must lead by for lead 3: one would let a trace whose
    /// scans seldom turn take lead 3 on a single duel (gli at 250 entries: 0.76 points lost).
    @usableFromInline static var twoUseTurn: Int { 2 }

    /// Pairs of slots, one per margin: a key's are at `pair(of:) + margin - 1`, on one cache
    /// line, so an odd slot holds a two-use duel. A slot: bit 0 occupied, bit 1 its key was the
    /// candidate, bits 2-31 the partner's slot, bits 32-63 its key's policy hash.
    @usableFromInline var slots: [UInt64]
    /// The pairs less one (a power of two less one): a hash's pair is `hash & mask`.
    @usableFromInline let mask: UInt32
    /// Occupied slots: with none (a cache that only reads), a use costs one comparison.
    @usableFromInline var live = 0
    /// Duels of a one-use margin settled for lead 1 (+1 each) and for lead 2 (−1), within
    /// ±`scoreBound`.
    @usableFromInline var score = 0
    /// Duels of a two-use margin settled for lead 2 (+1 each) and for lead 3 (−1), within
    /// ±`scoreBound`.
    @usableFromInline var twoUseScore = 0
    /// The uses a candidate needs over the victim: 1, 2 or 3.
    @usableFromInline var lead = Self.initialLead

    /// Duels for a cache of `capacity` entries (0: no count limit): a slot for each entry,
    /// from 256 to 4,096 slots (8 bytes each), half for each margin.
    init(capacity: Int) {
        var count = 256
        let wanted = capacity == 0 ? 1_024 : min(capacity, 4_096)
        while count < wanted { count *= 2 }
        slots = Array(repeating: 0, count: count)
        mask = UInt32(count / 2 - 1)
    }

    /// The first slot of the pair that the key whose policy hash is `hash` takes.
    @inlinable
    func pair(of hash: UInt32) -> Int {
        Int(hash & mask) &<< 1
    }

    /// Opens a duel for a decision that leads `margin` and `margin + 1` disagree on: the
    /// candidate leads the victim by `margin` uses (1 or 2; others open none).
    @usableFromInline
    mutating func open(candidate: UInt32, victim: UInt32, margin: UInt8) {
        guard margin == 1 || margin == 2 else { return }
        let offset = Int(margin) &- 1
        let candidateSlot = pair(of: candidate) &+ offset, victimSlot = pair(of: victim) &+ offset
        guard candidateSlot != victimSlot else { return }
        // A victim keeps its first duel: a victim the lead keeps stays at probation's end and
        // meets every candidate that leaves the window next, and a duel replaced at each
        // would last about one miss: with the lead fixed at 2, 21 one-use duels settle over
        // `lirs-multi2` at 1,421 entries, against 390 with it at 1 (`duel_tallies.py`).
        if holds(slots[victimSlot], victim), slots[victimSlot] & 2 == 0 { return }
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
        slots[Self.partner(of: entry)] = 0
        live &-= 2
    }

    /// The slot of an occupied slot's partner.
    @inlinable
    static func partner(of entry: UInt64) -> Int {
        Int(truncatingIfNeeded: entry >> 2 & 0x3FFF_FFFF)
    }

    /// Whether the key whose policy hash is `hash` has an open duel, of either margin.
    @inlinable
    func hasDuel(_ hash: UInt32) -> Bool {
        guard live > 0 else { return false }
        let first = pair(of: hash)
        return holds(slots[first], hash) || holds(slots[first &+ 1], hash)
    }

    /// Whether `entry` is an occupied slot of the key whose policy hash is `hash`.
    @inlinable
    func holds(_ entry: UInt64, _ hash: UInt32) -> Bool {
        entry & 1 != 0 && UInt32(truncatingIfNeeded: entry >> 32) == hash
    }

    /// A use of the key whose policy hash is `hash`: settles its duels, if it has any.
    @inlinable
    mutating func noteUse(_ hash: UInt32) {
        guard live > 0 else { return }
        let first = pair(of: hash)
        for slot in first...(first &+ 1) where holds(slots[slot], hash) { settle(slot) }
    }

    /// Settles the duel in `slot`, whose key was used first: moves its margin's score.
    @usableFromInline
    mutating func settle(_ slot: Int) {
        let change = slots[slot] & 2 != 0 ? 1 : -1
        forget(slot)
        if slot & 1 != 0 {
            twoUseScore = max(-Self.scoreBound, min(twoUseScore + change, Self.scoreBound))
        } else {
            score = max(-Self.scoreBound, min(score + change, Self.scoreBound))
        }
        // A score of 0 keeps what it chose last.
        let marginOneLead: UInt8 = score > 0 ? 1 : score < 0 ? 2 : (lead == 1 ? 1 : 2)
        lead = marginOneLead == 1 ? 1 : twoUseScore <= -Self.twoUseTurn ? 3 : 2
    }

    /// The broken invariants, empty when there are none: every occupied slot's partner is
    /// occupied, of its margin, and points back, one of the two is the candidate, every slot
    /// is in its key's pair, `live` counts them, and
    /// the lead is 1, 2 or 3.
    func invariantViolations() -> [String] {
        var violations: [String] = []
        var occupied = 0
        for (slot, entry) in slots.enumerated() where entry & 1 != 0 {
            occupied += 1
            let partnerSlot = Self.partner(of: entry)
            let partner = partnerSlot < slots.count ? slots[partnerSlot] : 0
            // Partners are of one margin: slots of the same parity.
            if partner & 1 == 0 || Self.partner(of: partner) != slot || (partner & 2) == (entry & 2)
                || (partnerSlot ^ slot) & 1 != 0 {
                violations.append("duel slot \(slot) has no partner pointing back")
            }
            if pair(of: UInt32(truncatingIfNeeded: entry >> 32)) != slot & ~1 {
                violations.append("duel slot \(slot) holds a hash of another pair")
            }
        }
        if occupied != live { violations.append("duels: \(live) live slots counted, \(occupied) occupied") }
        if !(1...3).contains(lead) { violations.append("admission lead \(lead)") }
        if abs(score) > Self.scoreBound || abs(twoUseScore) > Self.scoreBound {
            violations.append("duel scores \(score), \(twoUseScore) out of bounds")
        }
        return violations
    }
}
