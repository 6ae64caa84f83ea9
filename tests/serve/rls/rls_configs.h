#pragma once

// Configurations of the call sequences (tst_rls_sequences, tst_rls_decider): the original's
// test and example files, as its tests and README describe them.

namespace ratelab::rlstest {

inline constexpr const char* kBasicConfig = R"(domain: test-domain
descriptors:
  - key: key1
    value: value1
    descriptors:
      - key: subkey1
        rate_limit: {unit: second, requests_per_unit: 5}
      - key: subkey1
        value: subvalue1
        rate_limit: {unit: second, requests_per_unit: 10}
  - key: key2
    rate_limit: {unit: minute, requests_per_unit: 20}
  - key: key2
    value: value2
    rate_limit: {unit: minute, requests_per_unit: 30}
  - key: key2
    value: value3
  - key: key3
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: key4
    rate_limit: {unit: day, requests_per_unit: 1, name: key4_rate_limit}
  - key: key5
    value: value5
    descriptors:
      - key: subkey5
        value: subvalue5
        rate_limit: {unit: second, requests_per_unit: 5}
  - key: key6
    rate_limit: {unlimited: true}
  - key: key7
    rate_limit: {unit: minute, requests_per_unit: 70}
    detailed_metric: true
)";

// The counting sequences of the original's Redis cache tests: domain "domain".
inline constexpr const char* kCountingConfig = R"(domain: domain
descriptors:
  - key: key
    value: value
    rate_limit: {unit: second, requests_per_unit: 10}
  - key: key2
    value: value2
    descriptors:
      - key: subkey2
        value: subvalue2
        rate_limit: {unit: minute, requests_per_unit: 10}
  - key: key3
    value: value3
    rate_limit: {unit: hour, requests_per_unit: 10}
    descriptors:
      - key: subkey3
        value: subvalue3
        rate_limit: {unit: day, requests_per_unit: 10}
  - key: key4
    value: value4
    rate_limit: {unit: hour, requests_per_unit: 15}
  - key: key5
    value: value5
    rate_limit: {unit: hour, requests_per_unit: 14}
  - key: shadow4
    value: value4
    rate_limit: {unit: hour, requests_per_unit: 15}
    shadow_mode: true
  - key: s20
    rate_limit: {unit: second, requests_per_unit: 20}
  - key: s8
    rate_limit: {unit: second, requests_per_unit: 8}
  - key: s10
    rate_limit: {unit: second, requests_per_unit: 10}
  - key: s5
    rate_limit: {unit: second, requests_per_unit: 5}
  - key: shadow5
    rate_limit: {unit: second, requests_per_unit: 5}
    shadow_mode: true
  - key: m10
    rate_limit: {unit: minute, requests_per_unit: 10}
  - key: week
    rate_limit: {unit: week, requests_per_unit: 2}
  - key: month
    rate_limit: {unit: month, requests_per_unit: 2}
  - key: year
    rate_limit: {unit: year, requests_per_unit: 2}
)";

// The service tests' two domains.
inline constexpr const char* kServiceConfig = R"(domain: different-domain
descriptors:
  - key: foo
    value: bar
    rate_limit: {unit: minute, requests_per_unit: 10, name: key_name}
  - key: shadowed
    rate_limit: {unit: minute, requests_per_unit: 1}
    shadow_mode: true
  - key: regular
    rate_limit: {unit: minute, requests_per_unit: 1}
  - key: quota1
    rate_limit: {unit: minute, requests_per_unit: 1}
    quota_mode: true
  - key: quota2
    rate_limit: {unit: minute, requests_per_unit: 1}
    quota_mode: true
  - key: baz
    value: qux
    rate_limit: {unlimited: true, requests_per_unit: 55}
#--- test-domain.yaml
domain: test-domain
descriptors:
  - key: other
    rate_limit: {unit: minute, requests_per_unit: 1}
)";

// examples/ratelimit/config/example.yaml's rules that the integration scripts exercise.
inline constexpr const char* kExampleConfig = R"(domain: rl
descriptors:
  - key: category
    value: account
    rate_limit:
      unit: minute
      requests_per_unit: 4
      replaces:
        - name: bkthomps
        - name: fake_name
  - key: source_cluster
    value: proxy
    descriptors:
      - key: destination_cluster
        value: bkthomps
        rate_limit:
          unit: minute
          requests_per_unit: 2
          replaces:
            - name: bkthomps
      - key: destination_cluster
        value: mock
        rate_limit: {unit: minute, requests_per_unit: 1}
      - key: destination_cluster
        value: override
        rate_limit:
          unit: minute
          requests_per_unit: 2
          replaces:
            - name: banned_limit
      - key: destination_cluster
        value: fake
        rate_limit: {unit: minute, requests_per_unit: 2, name: fake_name}
  - key: foo
    rate_limit: {unit: minute, requests_per_unit: 2}
    descriptors:
      - key: bar
        rate_limit: {unit: minute, requests_per_unit: 3}
      - key: bar
        value: bkthomps
        rate_limit: {unit: minute, requests_per_unit: 1, name: bkthomps}
      - key: bar
        value: banned
        rate_limit: {unit: minute, requests_per_unit: 0, name: banned_limit}
      - key: baz
        value: shady
        rate_limit: {unit: minute, requests_per_unit: 3}
        shadow_mode: true
      - key: baz
        value: not-so-shady
        rate_limit: {unit: minute, requests_per_unit: 3}
  - key: unspec
    rate_limit: {unit: minute, requests_per_unit: 2}
    detailed_metric: true
  - key: service
    value: service_1
    rate_limit: {unit: minute, requests_per_unit: 1}
    quota_mode: true
  - key: service
    value: service_2
    rate_limit: {unit: minute, requests_per_unit: 2}
    quota_mode: true
)";

inline constexpr const char* kWildcardConfig = R"(domain: test-domain
descriptors:
  - key: wild
    value: foo*
    rate_limit: {unit: minute, requests_per_unit: 20}
  - key: midWild
    value: bar*b
    rate_limit: {unit: minute, requests_per_unit: 30}
  - key: file
    value: test1
    rate_limit: {unit: minute, requests_per_unit: 50}
  - key: file
    value: test*
    rate_limit: {unit: minute, requests_per_unit: 100}
  - key: file
    rate_limit: {unit: minute, requests_per_unit: 7}
  - key: nestedWild
    value: val1
    descriptors:
      - key: wild
        value: goo*
        rate_limit: {unit: minute, requests_per_unit: 3}
  - key: key-1
    rate_limit: {unit: minute, requests_per_unit: 100}
    descriptors:
      - key: key-2
        rate_limit: {unit: minute, requests_per_unit: 5}
  - key: exact
    value: one
    descriptors:
      - key: child
        rate_limit: {unit: minute, requests_per_unit: 4}
  - key: exact
    descriptors:
      - key: other
        rate_limit: {unit: minute, requests_per_unit: 6}
#--- share.yaml
domain: share-threshold-test
descriptors:
  - key: files
    value: files/*
    share_threshold: true
    rate_limit: {unit: hour, requests_per_unit: 10}
  - key: files_no_share
    value: files_no_share/*
    rate_limit: {unit: hour, requests_per_unit: 10}
#--- basic.yaml
domain: another
descriptors:
  - key: key1
    rate_limit: {unit: second, requests_per_unit: 50}
  - key: key2
    rate_limit: {unit: minute, requests_per_unit: 20}
  - key: key3
    rate_limit: {unit: hour, requests_per_unit: 10}
)";

inline constexpr const char* kMergeConfig = R"(domain: test-domain
descriptors:
  - key: key1
    value: value1
    rate_limit: {unit: minute, requests_per_unit: 10}
#--- merge_domain_key2.yaml
domain: test-domain
descriptors:
  - key: key2
    value: value2
    rate_limit: {unit: minute, requests_per_unit: 20}
)";

}  // namespace ratelab::rlstest
