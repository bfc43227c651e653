/** What a claim sees of its session's turns: the active one, or else the last terminal of 600 s. */
export interface ClaimSnapshotView {
  turn: Record<string, unknown> | null;
  terminal: Record<string, unknown> | null;
}

/** The snapshot of a session with neither an active turn nor a retained terminal. */
export const EMPTY_SNAPSHOT: ClaimSnapshotView = Object.freeze({ turn: null, terminal: null });

/**
 * The claim snapshots of the turns and terminals, one object per view (with or without the profile's
 * manifests) for as long as what it shows is unchanged, so that the claims made meanwhile share one
 * encoding of it instead of each retaining a copy.
 */
export class ClaimSnapshots {
  readonly #views = new WeakMap<
    object,
    { version: string; views: [ClaimSnapshotView?, ClaimSnapshotView?] }
  >();

  /** The view of `owner` (a turn or a terminal) at `version`, built once per version and view. */
  view(owner: object, version: string, selected: boolean, build: () => ClaimSnapshotView): ClaimSnapshotView {
    let known = this.#views.get(owner);
    if (!known || known.version !== version) {
      known = { version, views: [] };
      this.#views.set(owner, known);
    }
    const index = selected ? 1 : 0;
    const view = known.views[index] ?? build();
    known.views[index] = view;
    return view;
  }
}
