package redisclusterbackup

// NeverStarted is neverStarted, for its table test.
var NeverStarted = neverStarted
