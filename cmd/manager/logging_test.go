package main

import (
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// countingCore counts the With calls that reach the core below the lazy one.
type countingCore struct {
	zapcore.Core
	withs *atomic.Int32
}

func (c countingCore) With(fields []zapcore.Field) zapcore.Core {
	c.withs.Add(1)
	return countingCore{Core: c.Core.With(fields), withs: c.withs}
}

func (c countingCore) Check(entry zapcore.Entry, checked *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(entry.Level) {
		return checked.AddCore(entry, c)
	}
	return checked
}

func TestLazyFieldsEncodeOnlyWhatIsWritten(t *testing.T) {
	g := NewWithT(t)
	observed, logs := observer.New(zapcore.InfoLevel)
	var withs atomic.Int32
	log := zap.New(countingCore{Core: observed, withs: &withs}, zap.WrapCore(lazyFields))

	reconcile := log.With(zap.String("controller", "memcached")).With(zap.String("name", "a"), zap.Int("attempt", 1))
	reconcile.Debug("below the level")
	g.Expect(withs.Load()).To(BeZero(), "no field is encoded for a logger that writes nothing")

	reconcile.Info("written", zap.String("own", "field"))
	reconcile.Info("again")
	g.Expect(withs.Load()).To(Equal(int32(1)), "the fields of both Withs are encoded once, together")
	entries := logs.All()
	g.Expect(entries).To(HaveLen(2))
	g.Expect(entries[0].Message).To(Equal("written"))
	g.Expect(entries[0].Context).To(Equal([]zapcore.Field{
		zap.String("controller", "memcached"), zap.String("name", "a"), zap.Int("attempt", 1), zap.String("own", "field"),
	}))
	g.Expect(entries[1].Context).To(Equal([]zapcore.Field{
		zap.String("controller", "memcached"), zap.String("name", "a"), zap.Int("attempt", 1),
	}))

	// Two loggers made from one share nothing of each other's fields.
	parent := log.With(zap.String("controller", "tdset"))
	first, second := parent.With(zap.String("name", "x")), parent.With(zap.String("name", "y"))
	second.Info("second")
	first.Info("first")
	entries = logs.All()[2:]
	g.Expect(entries[0].Context).To(Equal([]zapcore.Field{zap.String("controller", "tdset"), zap.String("name", "y")}))
	g.Expect(entries[1].Context).To(Equal([]zapcore.Field{zap.String("controller", "tdset"), zap.String("name", "x")}))
}
