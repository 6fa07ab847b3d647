package command

// Running is running, for the tests of package command_test.
var Running = running
