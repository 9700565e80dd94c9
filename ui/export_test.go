package ui

// RowOf exposes rowOf to the external tests.
var RowOf = rowOf
