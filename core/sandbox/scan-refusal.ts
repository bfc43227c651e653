export type ScanRefusalReason =
  | 'workspace_unavailable'
  | 'workspace_not_allowed'
  | 'workspace_changed'
  | 'workspace_too_large';

/** Why a workspace could not be prepared for a command; nothing runs then. */
export class ScanRefusal extends Error {
  readonly reason: ScanRefusalReason;

  constructor(reason: ScanRefusalReason) {
    super('the workspace cannot be prepared for a command');
    this.name = 'ScanRefusal';
    this.reason = reason;
  }
}
