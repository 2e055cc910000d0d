/**
 * The sealing key (CHANNEL_SECRET_KEY) every test app and child process gets unless its test sets one (or
 * '' for none): instances that share a database must share the key, as in a real deployment; without it
 * each would make its own under its own DATA_DIR and the second to start would be refused.
 */
export const TEST_SEALING_KEY = '5e'.repeat(32);
