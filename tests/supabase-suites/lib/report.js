// Joins jest's results with fetch-to-quire.js's request log: each test's feature
// (features.js), whether it reached Quire, and for a failing one a one-line reason. Prints
// the figures as Markdown tables (per feature; per endpoint for auth-js's claimed subset) and
// the failing tests, and writes everything, each test included, to a JSON file.
//
//   node report.js OUT.json COMMIT SERVER FIXTURE.json SUITE=RESULTS.json=REQUESTS.jsonl...
const fs = require('fs')
const path = require('path')
const {
  classify,
  featureOrder,
  shortName,
  endpoint,
  CLAIMED,
  CLAIMED_FEATURE,
  CLIENT_ONLY,
} = require('./features')

const clip = (text, n) => (text.length > n ? text.slice(0, n - 1) + '…' : text)
const plain = (text) => String(text).replace(/\u001b\[[0-9;]*m/g, '')

function readLog(file) {
  if (!fs.existsSync(file)) return []
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line))
}

// "404 PGRST205: Could not find the table…" from a PostgREST, GoTrue or Quire error body.
function errorOf(r) {
  if (r.status === 0) return `no answer (${r.error})`
  let body = {}
  try {
    body = JSON.parse(r.error || '{}')
  } catch {
    return `${r.status} ${clip(String(r.error || '').trim(), 80)}`
  }
  const code =
    body.error_code || (typeof body.code === 'string' ? body.code : null) || body.error || ''
  const message = body.message || body.msg || body.error_description || ''
  return `${r.status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`
}

// What the assertion saw differ, from jest's failure message.
function assertionOf(failure) {
  const lines = plain(failure).split('\n')
  const diff = (sign) =>
    lines.find(
      (l) =>
        new RegExp(`^\\s*\\${sign} `).test(l) && !/^\s*[-+] (Snapshot|Received|Expected)\s/.test(l)
    )
  const minus = diff('-')
  const plus = diff('+')
  if (minus || plus) {
    const side = (l) => (l ? l.trim().slice(2).trim().replace(/,$/, '') : '(nothing)')
    return `expected ${side(minus)}, got ${side(plus)}`
  }
  const expected = lines.find((l) => /^\s*Expected/.test(l))
  const received = lines.find((l) => /^\s*Received/.test(l))
  if (expected && received) return `${expected.trim()}; ${received.trim()}`
  const zod = failure.match(/"message": "([^"]+)"/)
  if (/ZodError/.test(failure) && zod) return `the answer's shape: ${zod[1]}`
  return lines.find((l) => l.trim() !== '').trim()
}

function reasonOf(test) {
  const refused = test.requests.filter((r) => r.status >= 300 || r.status === 0)
  const last = refused[refused.length - 1]
  const why = last
    ? `${last.method} ${clip(last.path, 60)} → ${errorOf(last)}`
    : assertionOf(test.failure || '')
  return clip(why.replace(/\s+/g, ' '), 180)
}

function collect(suite, resultsFile, logFile) {
  const results = JSON.parse(fs.readFileSync(resultsFile, 'utf8'))
  const byTest = new Map()
  for (const r of readLog(logFile)) {
    const key = `${r.file}|${r.test}`
    if (!byTest.has(key)) byTest.set(key, [])
    byTest.get(key).push(r)
  }
  const tests = []
  const broken = []
  for (const f of results.testResults) {
    const file = path.basename(f.name)
    if (f.assertionResults.length === 0 && f.status === 'failed') {
      broken.push({
        file,
        error: clip(plain(f.message).trim().split('\n').slice(0, 3).join(' '), 300),
      })
    }
    for (const a of f.assertionResults) {
      const test = {
        file,
        name: a.fullName,
        status: a.status,
        requests: byTest.get(`${file}|${a.fullName}`) || [],
        failure: a.failureMessages.join('\n'),
      }
      test.feature = classify(suite, test)
      tests.push(test)
    }
  }
  return { tests, broken }
}

function count(tests) {
  const passed = tests.filter((t) => t.status === 'passed').length
  const failed = tests.filter((t) => t.status === 'failed').length
  return { tests: tests.length, passed, failed, skipped: tests.length - passed - failed }
}

function summarize(suite, tests, broken) {
  const reached = tests.filter((t) => t.feature !== CLIENT_ONLY)
  const features = featureOrder(suite)
    .map((feature) => ({ feature, ...count(tests.filter((t) => t.feature === feature)) }))
    .filter((f) => f.tests > 0)
  const summary = { totals: count(tests), reached: count(reached), features, broken }
  if (suite === 'auth-js') {
    const claimed = tests.filter((t) => t.feature === CLAIMED_FEATURE)
    summary.claimedEndpoints = CLAIMED.map((e) => ({
      endpoint: e,
      ...count(claimed.filter((t) => t.requests.some((r) => endpoint(r) === e))),
    }))
  }
  summary.tests = tests.map((t) => ({
    file: t.file,
    name: t.name,
    feature: t.feature,
    status: t.status,
    requests: t.requests.length,
    ...(t.status === 'failed' ? { reason: reasonOf(t) } : {}),
  }))
  return summary
}

function table(header, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n')
}

function print(suite, s, commit) {
  const r = s.reached
  console.log(`\n## ${suite} (supabase-js ${commit.slice(0, 8)})\n`)
  console.log(
    `${s.totals.tests} tests: ${s.totals.passed} passed, ${s.totals.failed} failed` +
      (s.totals.skipped ? `, ${s.totals.skipped} skipped` : '') +
      `. Of the ${r.tests} that send a request to Quire: ${r.passed} passed, ${r.failed} failed.\n`
  )
  for (const b of s.broken) console.log(`A test file did not run: ${b.file}: ${b.error}\n`)
  console.log(
    table(
      ['feature', 'tests', 'passed', 'failed'],
      s.features.map((f) => [f.feature, f.tests, f.passed, f.failed])
    )
  )
  if (s.claimedEndpoints) {
    console.log(`\nThe claimed subset by endpoint (tests using it):\n`)
    console.log(
      table(
        ['endpoint', 'tests', 'passed', 'failed'],
        s.claimedEndpoints.map((e) => [e.endpoint, e.tests, e.passed, e.failed])
      )
    )
  }
  const failing = s.tests.filter((t) => t.status === 'failed')
  if (failing.length > 0) {
    console.log(`\nFailing (${failing.length}):\n`)
    console.log(
      table(
        ['test', 'feature', 'reason'],
        failing.map((t) => [
          `${t.file.replace(/\.test\.ts$/, '')} › ${t.name}`,
          shortName(t.feature),
          t.reason,
        ])
      )
    )
  }
}

function main() {
  const [out, commit, server, fixtureFile, ...suites] = process.argv.slice(2)
  const fixture = JSON.parse(fs.readFileSync(fixtureFile, 'utf8'))
  const report = {
    generatedAt: new Date().toISOString(),
    supabaseJsCommit: commit,
    server,
    fixture: {
      statements: fixture.statements,
      settings: fixture.settings || {},
      refused: fixture.results
        .filter((r) => r.status !== 200 && r.status !== 'setting')
        .map(({ statement, sqlstate, error }) => ({ statement, sqlstate, error })),
    },
    suites: {},
  }
  console.log(`\n# Supabase's client tests against ${server}`)
  const settings = Object.keys(report.fixture.settings).length
  console.log(
    `\nFixture: ${fixture.statements - report.fixture.refused.length} of ${fixture.statements} statements ran` +
      (settings ? ` (PostgREST's settings as the data API's: ${JSON.stringify(report.fixture.settings)})` : '') +
      '; refused:'
  )
  for (const r of report.fixture.refused)
    console.log(`- \`${r.statement}\`: ${r.sqlstate} ${r.error}`)
  for (const arg of suites) {
    const [suite, resultsFile, logFile] = arg.split('=')
    const { tests, broken } = collect(suite, resultsFile, logFile)
    report.suites[suite] = summarize(suite, tests, broken)
    print(suite, report.suites[suite], commit)
  }
  fs.mkdirSync(path.dirname(out), { recursive: true })
  fs.writeFileSync(out, JSON.stringify(report, null, 2) + '\n')
  // A test file that did not run is the harness's failure, not a measurement.
  if (Object.values(report.suites).some((s) => s.broken.length > 0)) process.exitCode = 1
}

main()
