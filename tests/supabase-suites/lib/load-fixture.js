// Loads SQL files into a Quire database as its owner, one statement per request to
// `POST /api/database/v1/databases/{id}/query`, so that a statement Quire refuses is
// recorded and the rest still run (the fixture is made for the Supabase CLI's superuser).
//
//   node load-fixture.js API_URL KEY DATABASE_ID OUT.json FILE.sql...
//
// OUT.json lists every statement's outcome; the refused ones also go to stderr.
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

async function main() {
  const [apiUrl, key, databaseId, outFile, ...files] = process.argv.slice(2)
  const results = []
  for (const file of files) {
    for (const sql of statements(fs.readFileSync(file, 'utf8'))) {
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
  const refused = results.filter((r) => r.status !== 200).length
  fs.writeFileSync(
    outFile,
    JSON.stringify({ statements: results.length, refused, results }, null, 2)
  )
  console.error(
    `  ${results.length - refused} of ${results.length} fixture statements ran, ${refused} refused`
  )
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
