// Loads SQL files into a Quire database as its owner, one statement per request to
// `POST /api/database/v1/databases/{id}/query`, so that a statement Quire refuses is
// recorded and the rest still run (the fixture is made for the Supabase CLI's superuser).
//
//   node load-fixture.js API_URL KEY DATABASE_ID OUT.json FILE.sql...
//
// The fixture's `alter role authenticator set pgrst.…` statements are PostgREST's settings,
// which an owner cannot set on Quire's authenticator role: they are not run but made the
// database's data API settings (`PATCH …/data-api`), as they intend: db_aggregates_enabled,
// db_plan_enabled, db_tx_end (commit-allow-override), db_max_rows, db_schemas. The schemas
// the fixture makes and grants to anon are exposed after `public`, as the Supabase CLI's
// `[api] schemas` does for the suite (its config.toml is not vendored); db_schemas, when
// set, names them instead.
//
// OUT.json lists every statement's outcome and the settings made; the refused ones also go
// to stderr.
const fs = require('fs')
const path = require('path')

// Splits on `;` outside comments, quoted strings, quoted identifiers and dollar quotes.
function statements(sql) {
  const out = []
  let start = 0
  let i = 0
  while (i < sql.length) {
    const c = sql[i]
    const rest = sql.slice(i)
    if (rest.startsWith('--')) {
      const end = sql.indexOf('\n', i)
      i = end === -1 ? sql.length : end + 1
    } else if (rest.startsWith('/*')) {
      const end = sql.indexOf('*/', i + 2)
      i = end === -1 ? sql.length : end + 2
    } else if (c === "'" || c === '"') {
      let j = i + 1
      while (j < sql.length) {
        if (sql[j] === c && sql[j + 1] === c) j += 2
        else if (sql[j] === c) break
        else j += 1
      }
      i = j + 1
    } else if (c === '$') {
      const tag = rest.match(/^\$([A-Za-z_][A-Za-z0-9_]*)?\$/)
      if (tag) {
        const end = sql.indexOf(tag[0], i + tag[0].length)
        i = end === -1 ? sql.length : end + tag[0].length
      } else {
        i += 1
      }
    } else if (c === ';') {
      out.push(sql.slice(start, i + 1))
      i += 1
      start = i
    } else {
      i += 1
    }
  }
  out.push(sql.slice(start))
  // A chunk of only comments and blanks is no statement.
  const code = (s) =>
    s
      .replace(/--[^\n]*/g, '')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .trim()
  return out.filter((s) => code(s) !== '' && code(s) !== ';').map((s) => s.trim())
}

function firstLine(statement) {
  const line = statement
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '' && !l.startsWith('--'))
  return line.length > 100 ? line.slice(0, 99) + '…' : line
}

// `alter role authenticator set pgrst.NAME to 'VALUE'` (or `= 'VALUE'`): [name, value].
const PGRST_SETTING = /^alter\s+role\s+authenticator\s+set\s+pgrst\.(\w+)\s+(?:to|=)\s+'([^']*)'\s*;?$/i

// The data API settings PostgREST's `value` of `name` asks for.
function setting(settings, name, value) {
  const on = value.toLowerCase() === 'true'
  switch (name) {
    case 'db_aggregates_enabled':
      settings.aggregates = on
      return true
    case 'db_plan_enabled':
      settings.explain = on
      return true
    case 'db_tx_end':
      settings.txRollback = value.endsWith('-allow-override')
      return true
    case 'db_max_rows':
      settings.maxRows = value === '' ? null : Number(value)
      return true
    case 'db_schemas':
      settings.exposedSchemas = value.split(',').map((s) => s.trim())
      return true
    default:
      return false
  }
}

// Schemas the SQL makes and lets `anon` use: what the suite's Supabase exposes.
function grantedSchemas(sql) {
  const made = [...sql.matchAll(/create\s+schema\s+(?:if\s+not\s+exists\s+)?(\w+)/gi)].map(
    (m) => m[1]
  )
  return made.filter((s) =>
    new RegExp(`grant\\s+usage\\s+on\\s+schema\\s+${s}\\s+to\\s+[^;]*\\banon\\b`, 'i').test(sql)
  )
}

async function main() {
  const [apiUrl, key, databaseId, outFile, ...files] = process.argv.slice(2)
  const results = []
  const settings = {}
  let granted = []
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8')
    granted = granted.concat(grantedSchemas(text))
    for (const sql of statements(text)) {
      const pgrst = sql
        .replace(/--[^\n]*/g, '')
        .trim()
        .match(PGRST_SETTING)
      if (pgrst && setting(settings, pgrst[1], pgrst[2])) {
        results.push({ file: path.basename(file), statement: firstLine(sql), status: 'setting' })
        continue
      }
      const res = await fetch(`${apiUrl}/api/database/v1/databases/${databaseId}/query`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ sql }),
      })
      const body = await res.json().catch(() => ({}))
      const result = { file: path.basename(file), statement: firstLine(sql), status: res.status }
      if (!res.ok) {
        result.sqlstate = body.sqlstate || null
        result.error = body.message || body.error || null
        console.error(
          `  refused (${result.sqlstate || res.status}): ${result.statement}\n    ${result.error}`
        )
      }
      results.push(result)
    }
  }
  if (!settings.exposedSchemas && granted.length > 0) {
    settings.exposedSchemas = ['public', ...granted.filter((s) => s !== 'public')]
  }
  if (Object.keys(settings).length > 0) {
    const res = await fetch(`${apiUrl}/api/database/v1/databases/${databaseId}/data-api`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(settings),
    })
    const body = await res.json().catch(() => ({}))
    if (!res.ok) {
      throw new Error(`the data API settings ${JSON.stringify(settings)}: ${res.status} ${body.message}`)
    }
    console.error(`  data API settings from the fixture: ${JSON.stringify(body.dataApi.settings)}`)
  }
  const settingsMade = results.filter((r) => r.status === 'setting').length
  const refused = results.filter((r) => r.status !== 200 && r.status !== 'setting').length
  fs.writeFileSync(
    outFile,
    JSON.stringify({ statements: results.length, refused, settings, results }, null, 2)
  )
  console.error(
    `  ${results.length - refused - settingsMade} of ${results.length} fixture statements ran, ` +
      `${settingsMade} made data API settings, ${refused} refused`
  )
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
