"""The opener: a derivatives.yaml and its settings to a Profile, a NativeIndex and an analyzer."""
