/**
 * `env` arguments that start Node without the test runner's loader and coverage hooks, as a user would.
 * The test runner wraps `spawn` and puts its hooks and its coverage directory back into every child's
 * environment; `env -u` removes them once more, then execs node in place (the child's pid stays the
 * daemon's). A daemon run from its sources through tsx would write coverage that does not merge with the
 * test processes' and would only blur it.
 */
export const WITHOUT_TEST_HOOKS = ['-u', 'NODE_OPTIONS', '-u', 'NODE_V8_COVERAGE', process.execPath];
