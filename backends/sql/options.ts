/**
 * A backend class's options as its caller gave them, with every member the class takes and the
 * class's name: the SQL core's constructors refuse an unknown member (`checkOptionNames` from
 * `keygate/store-kit`, reason `unknown_option`) before they build anything, so no backend repeats
 * the check. A subclass's code before `super` only checks and wraps what it was given (no table,
 * no connection, no timer).
 *
 * @example
 * super(dialect, { where: 'SqliteDashboardStore', options, names: ['database', 'busyTimeoutMs'] });
 */
export interface GivenOptions {
  /** The class's name, as the refusal's message carries it (`'PostgresKeyStore'`). */
  readonly where: string;
  /** The options object the caller passed (undefined passes). */
  readonly options: unknown;
  /** Every member the class takes. */
  readonly names: readonly string[];
}
