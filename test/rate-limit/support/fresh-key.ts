let keys = 0;

/**
 * A key id no other test of this run uses, so that shared backends need no cleaning between tests.
 *
 * @example
 * const key = freshKey('ttl'); // 'key_ttl_1a2b_lq3x_1'
 */
export const freshKey = (label = 'k') => `key_${label}_${process.pid}_${Date.now().toString(36)}_${++keys}`;
