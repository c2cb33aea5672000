// Which PostgREST or GoTrue feature a test exercises, judged from the requests it sent to
// Quire (fetch-to-quire.js's log) and, where those do not tell, its file and name. The first
// rule that matches wins, so the specific features come before the general ones. A test
// that sent no request to Quire is "client only": it says nothing about Quire.

const CLIENT_ONLY = 'client only (no request reaches Quire)'

// The select and order parameters of a request's query, as one string to match on.
function selectsOf(requests) {
  return requests
    .map((r) => {
      const query = new URLSearchParams(
        r.path.includes('?') ? r.path.slice(r.path.indexOf('?') + 1) : ''
      )
      return [...query.entries()]
        .filter(([k]) => k === 'select' || k === 'order' || k.endsWith('.order'))
        .map(([, v]) => v)
        .join(' ')
    })
    .join(' ')
}

const any = (requests, f) => requests.some(f)
const header = (name, pattern) => (r) => r[name] != null && pattern.test(r[name])

const postgrestRules = [
  ['CSV', (t) => any(t.requests, header('accept', /text\/csv/))],
  ['GeoJSON', (t) => any(t.requests, header('accept', /geo\+json/))],
  ['EXPLAIN', (t) => any(t.requests, header('accept', /vnd\.pgrst\.plan/))],
  [
    '`Prefer: tx=rollback`',
    (t) => /rollback/i.test(t.name) && any(t.requests, header('prefer', /tx=rollback/)),
  ],
  ['max-affected', (t) => any(t.requests, header('prefer', /max-affected/))],
  ['schema switching (`Accept-/Content-Profile`)', (t) => any(t.requests, (r) => r.profile)],
  ['JSON paths `->`/`->>` in select and order', (t) => /->/.test(selectsOf(t.requests))],
  [
    'aggregates (`count()`, `sum()`, `rel(count)`)',
    (t) => /\b(count|sum|avg|min|max)\(\)|\(count\)|\(sum\)/.test(selectsOf(t.requests)),
  ],
  ['embedding: spread `...rel`', (t) => /\.\.\./.test(selectsOf(t.requests))],
  [
    'computed fields (functions of a row in `select`)',
    (t) =>
      (t.file === 'embeded_functions_join.test.ts' && /\w\(\)/.test(selectsOf(t.requests))) ||
      /computed|blurb|created_ago|days_since/i.test(t.name),
  ],
  [
    'embedding: functions as relationships',
    (t) => t.file === 'embeded_functions_join.test.ts' && /\w\(/.test(selectsOf(t.requests)),
  ],
  [
    'resource embedding: joins, `!inner`/`!left`, hints, self-references, many-to-many, embedded filters/order/limit',
    (t) => /[\w!"]\(/.test(selectsOf(t.requests)),
  ],
  [
    'rpc: overloaded / polymorphic functions',
    (t) =>
      any(t.requests, (r) => r.path.startsWith('/rpc/')) &&
      /polymorphic|overload|resolvable/i.test(t.name),
  ],
  [
    'rpc: row-type arguments, setof and view returns',
    (t) => any(t.requests, (r) => r.path.startsWith('/rpc/')) && t.file === 'advanced_rpc.test.ts',
  ],
  [
    'rpc: POST/GET, optional and array params, select/filter on the result, count',
    (t) => any(t.requests, (r) => r.path.startsWith('/rpc/')),
  ],
  [
    'count exact/planned/estimated, head',
    (t) =>
      any(t.requests, (r) => r.method === 'HEAD' || /count=/.test(r.prefer || '')) &&
      !/insert|update|upsert|delete/i.test(t.name),
  ],
  [
    'insert / upsert / update / delete: returning, `columns=`, `on_conflict`, ignoreDuplicates, `missing=default`',
    (t) =>
      any(t.requests, (r) => ['POST', 'PATCH', 'DELETE', 'PUT'].includes(r.method)) &&
      t.file !== 'transforms.test.ts',
  ],
  ['text search (fts, plfts, phfts, wfts)', (t) => /textSearch/.test(t.name)],
  [
    'filters (eq, neq, gt…, like/ilike, is, in, cs/cd, ranges, ov, isDistinct, regex, match, or/not)',
    (t) => t.file === 'filters.test.ts',
  ],
  ['stripNulls (`nulls=stripped`)', (t) => any(t.requests, header('accept', /nulls=stripped/))],
  ['abort signal', (t) => /abort/i.test(t.name)],
  ['order / limit / range / single / maybeSingle', (t) => t.file === 'transforms.test.ts'],
  ['select: columns, aliases, casts, views, single/maybeSingle, errors, types', () => true],
]

// GoTrue's endpoints as the tests reach them: method, path without query, and the grant type.
function endpoint(r) {
  const [path, query] = r.path.split('?')
  const grant = new URLSearchParams(query || '').get('grant_type')
  return `${r.method} ${path.replace(/\/[0-9a-f-]{36}(?=\/|$)|\/test-factor-id|\/invalid-factor-id/g, '/{id}')}${grant ? `?grant_type=${grant}` : ''}`
}

// The subset Quire claims: docs/decisions/database-auth.md.
const CLAIMED = [
  'POST /signup',
  'POST /token?grant_type=password',
  'POST /token?grant_type=refresh_token',
  'GET /user',
  'PUT /user',
  'POST /logout',
]
const CLAIMED_FEATURE = 'the claimed subset: sign-up, password and refresh grants, user, sign-out'
// Names about a feature outside the subset, for tests whose requests alone do not say.
const OTHER_AUTH =
  /mfa|factor|webauthn|passkey|oauth|withIdToken|\bid token\b|web3|ethereum|solana|otp|magic|resend|sso|saml|identit|resetPassword|anonym|reauth|RS256|jwks|asymmetric|admin/i

const authRules = [
  [
    'MFA (TOTP, WebAuthn: `/factors`)',
    (t) => t.endpoints.some((e) => e.includes('/factors')) || /mfa|webauthn/i.test(t.name),
  ],
  ['Web3 sign-in', (t) => t.endpoints.some((e) => e.includes('web3')) || /web3/i.test(t.name)],
  [
    'OAuth/OIDC providers, ID tokens, PKCE code exchange',
    (t) =>
      (t.endpoints.some((e) => /authorize|id_token|pkce/.test(e)) && !/identit/i.test(t.name)) ||
      /oauth|withIdToken|\bid token\b/i.test(t.name),
  ],
  ['SSO/SAML', (t) => t.endpoints.some((e) => e.includes('/sso')) || /sso|saml/i.test(t.name)],
  [
    'magic link / email OTP (`/otp`, `/verify`)',
    (t) => t.endpoints.some((e) => /\/otp|\/verify/.test(e)) || /otp/i.test(t.name),
  ],
  [
    'resend confirmation',
    (t) => t.endpoints.some((e) => e.includes('/resend')) || /resend/i.test(t.name),
  ],
  [
    'identities and linking',
    (t) => t.endpoints.some((e) => e.includes('/identities')) || /identit/i.test(t.name),
  ],
  [
    'password recovery (`/recover`)',
    (t) => t.endpoints.some((e) => e.includes('/recover')) || /resetPassword/i.test(t.name),
  ],
  ['anonymous sign-in', (t) => /anonym/i.test(t.name)],
  [
    'reauthenticate',
    (t) => t.endpoints.some((e) => e.includes('/reauthenticate')) || /reauth/i.test(t.name),
  ],
  [
    'asymmetric signing keys (`getClaims` verifying RS256, JWKS)',
    (t) => t.endpoints.some((e) => e.includes('jwks')) || /RS256|asymmetric/i.test(t.name),
  ],
  ['admin API', (t) => t.endpoints.some((e) => e.includes('/admin'))],
  [
    CLAIMED_FEATURE,
    (t) => t.endpoints.every((e) => CLAIMED.includes(e)) && !OTHER_AUTH.test(t.name),
  ],
  ['other', () => true],
]

function classify(suite, test) {
  if (test.requests.length === 0) return CLIENT_ONLY
  if (suite === 'auth-js') {
    const t = { ...test, endpoints: [...new Set(test.requests.map(endpoint))] }
    return authRules.find(([, matches]) => matches(t))[0]
  }
  return postgrestRules.find(([, matches]) => matches(test))[0]
}

// The name a feature has in the list of failing tests.
const SHORT = [
  [/^resource embedding/, 'embedding'],
  [/^embedding: functions/, 'embedded functions'],
  [/^embedding: spread/, 'spread'],
  [/^rpc: overloaded/, 'rpc overloads'],
  [/^rpc: row-type/, 'rpc row types'],
  [/^rpc: POST/, 'rpc'],
  [/^insert/, 'writes'],
  [/^the claimed subset/, 'claimed subset'],
]
function shortName(feature) {
  const found = SHORT.find(([pattern]) => pattern.test(feature))
  return found ? found[1] : feature.replace(/ \(.*$/, '').replace(/`/g, '')
}

// The order features are listed in: the rules' order, client-only last.
function featureOrder(suite) {
  return [...(suite === 'auth-js' ? authRules : postgrestRules).map(([name]) => name), CLIENT_ONLY]
}

module.exports = {
  classify,
  featureOrder,
  shortName,
  endpoint,
  CLAIMED,
  CLAIMED_FEATURE,
  CLIENT_ONLY,
}
