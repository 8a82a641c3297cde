// One of six workers of the same cases: see cases.js.
require('./cases.js');
