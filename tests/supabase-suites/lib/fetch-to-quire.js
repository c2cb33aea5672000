// Jest setup (setupFilesAfterEnv) for both suites: the one place where the vendored tests
// are adapted to Quire, so the test files themselves stay as supabase-js has them.
//
// Every request the tests send to the Supabase CLI's gateway (port 54321) goes to Quire's
// database instead, with the keys swapped for the database's own:
// - the base URL: `…:54321/rest/v1` and `…:54321/auth/v1` become the database's REST and
//   auth URLs;
// - the keys: a JWT the auth tests sign for the CLI (`iss: supabase-demo`, or the admin's
//   `role: supabase_admin`) becomes Quire's anon or service_role key in `apikey` and in
//   `Authorization`; tokens Quire issued pass unchanged;
// - an `apikey` header (the anon key) where the request has none: the bare postgrest-js
//   client sends none, and Quire's gateway, as Kong's key-auth, refuses a request without.
// - one more header on auth requests, `X-Forwarded-For` (Quire trusts loopback as a proxy in
//   this run): an address per test, so each test is its own client. Quire's sign-up limit
//   (30 an hour per client address and database) is fixed, where the suite's own GoTrue
//   configuration raises GoTrue's to 100 in 5 minutes; from one address, the 29th sign-up
//   on would be refused. QUIRE_SUITES_ONE_CLIENT=1 leaves the header out.
// Requests to any other address (the tests' deliberately unreachable hosts) are untouched.
//
// Each request that reaches Quire is appended to QUIRE_SUITES_REQUEST_LOG (one JSON line:
// test file, test name, method, path, the headers that select a feature, status, and the
// start of the body of an answer of 300 or more), which the report uses to classify tests
// and explain failures.
const fs = require('fs')
const path = require('path')

const env = process.env
const targets = [
  { from: /^http:\/\/(localhost|127\.0\.0\.1):54321\/rest\/v1/, to: env.QUIRE_SUITES_REST_URL },
  { from: /^http:\/\/(localhost|127\.0\.0\.1):54321\/auth\/v1/, to: env.QUIRE_SUITES_AUTH_URL },
]
const keys = { anon: env.QUIRE_SUITES_ANON_KEY, service_role: env.QUIRE_SUITES_SERVICE_KEY }
const log = env.QUIRE_SUITES_REQUEST_LOG
const oneClient = env.QUIRE_SUITES_ONE_CLIENT === '1'
const realFetch = globalThis.fetch

function claims(token) {
  const parts = String(token).split('.')
  if (parts.length !== 3) return null
  try {
    return JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'))
  } catch {
    return null
  }
}

// The key Quire has for a token the tests made for the Supabase CLI, or null for any other.
function quireKeyFor(token) {
  const c = claims(token)
  if (!c) return null
  if (c.role === 'supabase_admin') return keys.service_role
  if (c.iss === 'supabase-demo' && keys[c.role]) return keys[c.role]
  return null
}

function adaptHeaders(raw) {
  const headers = new Headers(raw || {})
  const apikey = headers.get('apikey')
  if (apikey === null) {
    headers.set('apikey', keys.anon)
  } else if (quireKeyFor(apikey)) {
    headers.set('apikey', quireKeyFor(apikey))
  }
  const auth = headers.get('authorization')
  const bearer = auth && auth.match(/^Bearer (.+)$/i)
  if (bearer && quireKeyFor(bearer[1])) {
    headers.set('authorization', `Bearer ${quireKeyFor(bearer[1])}`)
  }
  return headers
}

function decoded(text) {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

function currentTest() {
  try {
    const state = expect.getState()
    return {
      file: state.testPath ? path.basename(state.testPath) : null,
      test: state.currentTestName || null,
    }
  } catch {
    return { file: null, test: null }
  }
}

// 10.x.y.z from the test's name: stable across runs, distinct between tests.
function clientAddress(name) {
  const digest = require('crypto').createHash('sha256').update(String(name)).digest()
  return `10.${digest[0]}.${digest[1]}.${digest[2]}`
}

function record(entry) {
  if (!log) return
  try {
    fs.appendFileSync(log, JSON.stringify(entry) + '\n')
  } catch {
    // A lost line costs a classification, never the test.
  }
}

globalThis.fetch = async function fetchToQuire(input, init) {
  const url = typeof input === 'string' || input instanceof URL ? String(input) : input.url
  const target = targets.find((t) => t.to && t.from.test(url))
  if (!target) return realFetch(input, init)

  const quireUrl = url.replace(target.from, target.to)
  const request = new Request(quireUrl, input instanceof Request ? input : undefined)
  const options = { ...(init || {}) }
  options.headers = adaptHeaders(init && init.headers ? init.headers : request.headers)
  if (input instanceof Request && !init) {
    options.method = request.method
    options.body = request.body
    options.duplex = 'half'
  }

  const test = currentTest()
  if (target === targets[1] && !oneClient) {
    options.headers.set('x-forwarded-for', clientAddress(`${test.file} ${test.test}`))
  }

  const u = new URL(quireUrl)
  const base = new URL(target.to)
  const entry = {
    ...test,
    api: target === targets[0] ? 'rest' : 'auth',
    method: (options.method || 'GET').toUpperCase(),
    path: decoded(u.pathname.slice(base.pathname.length) + u.search),
    prefer: options.headers.get('prefer'),
    accept: options.headers.get('accept'),
    profile: options.headers.get('accept-profile') || options.headers.get('content-profile'),
  }
  let response
  try {
    response = await realFetch(quireUrl, options)
  } catch (error) {
    record({ ...entry, status: 0, error: String(error && error.message) })
    throw error
  }
  entry.status = response.status
  if (response.status >= 300) {
    try {
      entry.error = (await response.clone().text()).slice(0, 400)
    } catch {
      entry.error = null
    }
  }
  record(entry)
  return response
}
