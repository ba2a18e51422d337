// Sums the jest JSON results of CI's test runs (one per Node version) into
// the one closing line CI is read by: "N passed, N failed". A run that wrote
// no results counts as one failure; exit 1 when anything failed or a run ran no test.
'use strict';
const { readFileSync } = require('node:fs');

const files = process.argv.slice(2);
let passed = 0;
let failed = files.length === 0 ? 1 : 0;
let emptyRun = false;
for (const file of files) {
  let results;
  try {
    results = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    process.stderr.write(`ci: ${file}: jest wrote no results\n`);
    failed += 1;
    continue;
  }
  passed += results.numPassedTests;
  failed += results.numFailedTests + results.numRuntimeErrorTestSuites;
  if (results.numPassedTests === 0) emptyRun = true;
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || emptyRun ? 1 : 0);
