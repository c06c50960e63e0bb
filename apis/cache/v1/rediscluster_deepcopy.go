package v1

import "maps"

// DeepCopyInto copies in into out; its values are strings.
func (in RedisConfig) DeepCopyInto(out *RedisConfig) {
	*out = maps.Clone(in)
}

// DeepCopy returns a copy of in, nil when in is nil.
func (in RedisConfig) DeepCopy() RedisConfig {
	return maps.Clone(in)
}
