// The jest configuration of both suites, run from the suite's folder in the cache (where
// `run` lays its src/ from the npm package and its test/ from vendor/). As supabase-js's own
// configurations (ts-jest, node environment, one worker, its test sequencer for postgrest-js),
// except: TypeScript is transpiled without type checks (the type-level assertions are not
// what runs against Quire, and checking costs most of the run), snapshots are never written
// (`run` passes --ci), and fetch goes through fetch-to-quire.js.
const path = require('path')

const suiteDir = process.env.QUIRE_SUITES_SUITE_DIR
const suite = path.basename(suiteDir)

module.exports = {
  rootDir: suiteDir,
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testEnvironment: 'node',
  transform: {
    '^.+\\.tsx?$': [
      'ts-jest',
      {
        tsconfig: {
          target: 'ES2022',
          module: 'CommonJS',
          moduleResolution: 'node',
          lib: ['es2022', 'dom'],
          esModuleInterop: true,
          isolatedModules: true,
          skipLibCheck: true,
          strict: true,
        },
      },
    ],
  },
  setupFilesAfterEnv: [path.join(__dirname, 'fetch-to-quire.js')],
  testSequencer: suite === 'postgrest-js' ? '<rootDir>/test/testSequencer.js' : undefined,
  prettierPath: require.resolve('prettier', { paths: [suiteDir] }),
  cacheDirectory: path.join(suiteDir, '..', 'jest-cache'),
  maxWorkers: 1,
  // postgrest-js's own 30 s; auth-js keeps jest's default 5 s, as its configuration does.
  testTimeout: suite === 'postgrest-js' ? 30000 : 5000,
  silent: true,
  forceExit: true,
}
