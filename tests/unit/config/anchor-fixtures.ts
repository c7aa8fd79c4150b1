// Config files that share values through YAML anchors (&x), aliases (*x) and merge keys
// (<<: *x), each valid for the daemon; used by the edit tests of the panel and /config.
export const FIXTURES: Record<string, string> = {
  'a scalar anchored in one entry, aliased by two': `# hosts shared by anchors
tunnels:
  - name: db
    remote_host: &jump user@bastion   # the jump host
    remote_port: 5432
    local_port: 15432
  - name: cache
    remote_host: *jump
    remote_port: 6379
    local_port: 16379
  - name: web
    remote_host: *jump
    remote_port: 80
    local_port: 18080
`,
  'a defaults map merged into every entry': `defaults: &defaults
  remote_host: user@bastion
  direction: remote_to_local
  ssh_options:
    ServerAliveInterval: 15
tunnels:
  # both through the bastion
  - <<: *defaults
    name: db
    remote_port: 5432
    local_port: 15432
  - <<: *defaults
    name: web
    remote_port: 80
    local_port: 18080
`,
  'an entry anchored whole, merged by the next': `tunnels:
  - &base
    name: db
    remote_host: user@bastion
    remote_port: 5432
    local_port: 15432
    direction: remote_to_local
  - <<: *base
    name: db-replica
    local_port: 15433
`,
  'an entry anchored whole, merged by two': `tunnels:
  - &base
    name: db
    remote_host: user@bastion
    remote_port: 5432
    local_port: 15432
  - <<: *base
    name: db-replica
    local_port: 15433
  - <<: *base
    name: db-third
    local_port: 15434
`,
  'a whole entry that is an alias of a map outside the list': `spare: &spare
  name: spare
  remote_host: h9
  remote_port: 9
  local_port: 19
tunnels:
  - *spare
  - name: other
    remote_host: h8
    remote_port: 8
    local_port: 18
`,
  'nested anchors: a port, an ssh_options map and a value inside it': `tunnels:
  - name: a
    remote_host: h1
    remote_port: &p 5432
    local_port: 15432
    ssh_options: &opts
      ServerAliveInterval: &sai 10
  - name: b
    remote_host: h2
    remote_port: *p
    local_port: 15433
    ssh_options:
      ServerAliveInterval: *sai
  - name: c
    remote_host: h3
    remote_port: *p
    local_port: 15434
    ssh_options: *opts
`,
  'a list of merges, an inline one, anchored interactive and health_check': `base: &b { remote_host: h0, remote_port: 3 }
tunnels:
  - name: a
    remote_host: h1
    remote_port: 1
    local_port: 11
    interactive: &int false
    health_check: &hc {type: tcp, interval: 5}
  - <<: [{remote_host: h2, remote_port: 2}, *b]
    name: b
    local_port: 12
    interactive: *int
    health_check: *hc
  - {<<: *b, name: c, local_port: 13}
`,
};
