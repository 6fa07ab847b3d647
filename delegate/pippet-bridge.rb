# pippet-bridge: applies resources of the types pippet does not implement
# through Puppet's own resource layer, one at a time, for the receiver's
# --fallback. It is pippet's own program (not a Puppet face): the receiver
# embeds it and runs it with the system's ruby and Puppet's libraries.
#
#   ruby pippet-bridge.rb [PUPPET SETTINGS...]     e.g. --modulepath=/m --noop
#
# Protocol (the receiver's, see README "Delegation"): after Puppet is loaded
# a ready line {"ready":true,...}; then one JSON request per line on stdin,
# {"type":T,"title":N,"params":{...} or "YAML",["refresh":true],["id":I]}, and
# one JSON answer per line on stdout, in Puppet's yamlresource order:
# resource, failed, changed, noop, error, exception, then events and the
# request's id.
#
# Each resource is applied as `puppet resource TYPE NAME k=v` applies one
# (Puppet::Resource::Ral#save): Puppet::Resource -> to_ral -> a catalog
# holding that one resource -> catalog.apply (a Puppet::Transaction); the
# answer is read from the transaction report's resource status and events.
# Nothing is compiled; types and providers (Resource API ones included) are
# autoloaded from the environment's modulepath on first use.
#
# Puppet's log goes to stderr as "Level: /Type[title]/property: message",
# one record per line. stdout is kept for answers only: $stdout is pointed
# at stderr, so a provider that prints cannot break the stream.

answers = $stdout.dup
answers.sync = true
$stdout.reopen($stderr)
$stderr.sync = true

require 'json'
require 'yaml'
require 'puppet'

# Ordering metaparameters name resources of the caller's graph, not of this
# one-resource catalog: ordering belongs to the caller (as in pippet).
ORDERING = %w[before require notify subscribe stage].freeze
LEVEL_NAMES = {
  debug: 'Debug', info: 'Info', notice: 'Notice', warning: 'Warning',
  err: 'Error', alert: 'Alert', emerg: 'Emergency', crit: 'Critical'
}.freeze

# Puppet's log, one record per line on stderr (the receiver relays each
# line at the level its prefix names; a message of several lines comes as
# one "Pippet-Log: JSON" line).
Puppet::Util::Log.newdesttype :pippet_stderr do
  def handle(msg)
    name = LEVEL_NAMES[msg.level] || msg.level.to_s.capitalize
    prefix = msg.source == 'Puppet' || msg.source.to_s.empty? ? "#{name}: " : "#{name}: #{msg.source}: "
    text = msg.message.to_s.chomp
    unless text.include?("\n")
      $stderr.write(prefix + text + "\n")
      return
    end
    # A message of several lines is one record: one line of JSON, which
    # the receiver makes one record again (one entry of the report's logs,
    # as Puppet's).
    begin
      $stderr.write('Pippet-Log: ' + JSON.generate('prefix' => prefix, 'message' => text) + "\n")
    rescue JSON::GeneratorError, Encoding::UndefinedConversionError
      text.each_line { |l| $stderr.write(prefix + l.chomp + "\n") }
    end
  end
end

# Collects the err-level messages of the resource in progress, for the
# answer's exception.
class PippetErrors
  attr_reader :messages

  def initialize
    @messages = []
  end

  def handle(msg)
    @messages << msg.message.to_s if %i[err alert emerg crit].include?(msg.level)
  end
end
Puppet::Util::Log.newdesttype :pippet_errors do
  match 'PippetErrors'
  def initialize(collector)
    @collector = collector
  end

  def handle(msg)
    @collector.handle(msg)
  end
end

def answer(out, h)
  out.write(JSON.generate(h) + "\n")
end

def error_answer(ref, msg)
  h = { 'resource' => ref, 'failed' => true, 'changed' => false, 'noop' => false, 'error' => true, 'exception' => msg }
  h.delete('resource') if ref.nil?
  h
end

def ref_of(type, title)
  name = type.to_s.split('::').map(&:capitalize).join('::')
  "#{name}[#{title}]"
end

def event_hash(e)
  h = { 'property' => (e.property || e.name).to_s }
  h['previous'] = e.previous_value.to_s unless e.previous_value.nil?
  h['desired'] = e.desired_value.to_s unless e.desired_value.nil?
  h['message'] = e.message.to_s
  h['status'] = e.status.to_s
  h
end

# The run's catalog ({"op":"catalog","token":T,"resources":[{"type",
# "title","params"}...]}): every resource of the caller's run, made into
# Puppet's (with its params, else bare, else left out, as for
# autorelations) and kept under T, the one catalog kept (a new one
# replaces it). A request naming T ("__pippet_catalog" in its params) is
# applied in a catalog that holds them too, as in Puppet, where any type
# may look at any resource of its catalog (a datacat_collector finds its
# File): seen, not applied (each is its own request). Those Puppet
# cannot make are there by name only (resource_refs: a purge leaves them);
# the answer's "left_out" lists them.
RUN_CATALOG = {}

def ral_of(c)
  params = (c['params'].is_a?(Hash) ? c['params'] : {}).reject { |k, _| ORDERING.include?(k.to_s) }
  [params, {}].uniq.each do |p|
    return Puppet::Resource.new(c['type'], c['title'], parameters: p).to_ral
  rescue Puppet::Error, ArgumentError, TypeError, StandardError
    next
  end
  nil
end

def run_catalog(env, req)
  list = req['resources']
  token = req['token']
  unless list.is_a?(Array) && token.is_a?(String)
    return error_answer('Catalog[run]', 'invalid catalog request: token must be a string, resources a list')
  end

  seen = Puppet::Resource::Catalog.new(nil, env)
  left = []
  list.each do |c|
    next unless c.is_a?(Hash) && c['type'].is_a?(String) && c['title'].is_a?(String)
    type = Puppet::Type.type(c['type'].downcase)
    next if type.nil? # a class, a defined type, a type Puppet lacks

    r = ral_of(c)
    begin
      seen.add_resource(r) unless r.nil? || seen.resource(r.ref)
      next unless r.nil?
    rescue Puppet::Error, ArgumentError
      nil # another resource under one of its names
    end
    # Named only, by its title and its name.
    left << ref_of(type.name, c['title'])
    name = c['params'].is_a?(Hash) ? c['params']['name'] : nil
    left << ref_of(type.name, name) if name.is_a?(String) && name != c['title']
  end
  members = {}.compare_by_identity
  seen.resources.each { |r| members[r] = true }
  RUN_CATALOG.clear
  RUN_CATALOG[token] = [seen, left, members]
  { 'resource' => 'Catalog[run]', 'failed' => false, 'changed' => false, 'noop' => false,
    'error' => false, 'exception' => nil, 'left_out' => left }
end

# The catalog of one request, seeing the run's (run_catalog): its own
# resources first, then the run's, for every lookup a type makes
# (resource, resources, resource_refs, resource_keys). The relationship
# graph is built from its own resources only, and whatever of the run's
# an autorelationship pulled into it is taken out: nothing here orders,
# applies, prefetches or generates from them.
def see_run(catalog, seen, left)
  catalog.define_singleton_method(:resource) do |type, title = nil|
    super(type, title) || seen.resource(type, title)
  end
  catalog.define_singleton_method(:resources) do
    own = super()
    next own if @pippet_own_only

    refs = own.to_h { |r| [r.ref, true] }
    own + seen.resources.reject { |r| refs.key?(r.ref) }
  end
  catalog.define_singleton_method(:resource_keys) { (super() + seen.resource_keys).uniq }
  catalog.define_singleton_method(:resource_refs) { (super() + seen.resource_refs + left).uniq }
  catalog.define_singleton_method(:relationship_graph) do |given_prioritizer = nil|
    unless @relationship_graph
      @pippet_own_only = true
      begin
        graph = super(given_prioritizer)
      ensure
        @pippet_own_only = false
      end
      graph.vertices.each { |v| graph.remove_vertex!(v) unless v.catalog.equal?(self) }
    end
    super(given_prioritizer)
  end
end

# What a type sets on a resource of the run's catalog (Puppet::Type#[]=)
# while a request is applied: datacat_collector sets its File's content.
# The answer's run_changes carry it to the caller, whose resource is
# applied with it, as Puppet applies the changed resource of its catalog.
module PippetRunWatch
  class << self
    attr_accessor :seen, :touched
  end

  def []=(name, value)
    seen = PippetRunWatch.seen
    PippetRunWatch.touched << [self, name] if seen&.key?(self)
    super
  end
end
Puppet::Type.prepend(PippetRunWatch)

def run_changes(touched)
  by = {}.compare_by_identity
  touched.each do |r, name|
    name = name.to_sym
    name = r.name_var if name == :name && r.name_var
    param = r.parameter(name)
    next if param.nil?
    value = param.respond_to?(:actual_content) && !param.actual_content.nil? ? param.actual_content : r[name]
    next if value.nil?
    value = value.binary_buffer if value.respond_to?(:binary_buffer)
    (by[r] ||= {})[name.to_s] = plain(value)
  end
  by.map { |r, params| { 'type' => r.type.to_s, 'title' => r.title.to_s, 'params' => params } }
end

# Applies one request; returns the answer hash.
def apply_one(env, req, errors)
  type_name = req['type']
  title = req['title']
  params = req['params']
  unless type_name.is_a?(String) && title.is_a?(String)
    return error_answer(nil, 'invalid request: type and title must be strings')
  end
  ref = ref_of(type_name, title)
  params = YAML.safe_load(params) || {} if params.is_a?(String)
  return error_answer(ref, 'invalid request: params must be a mapping') unless params.is_a?(Hash)

  # The run's catalog, seen by the resource (run_catalog).
  seen_cat, left_refs, seen = RUN_CATALOG[params.delete('__pippet_catalog')]

  type = Puppet::Type.type(type_name.downcase)
  return error_answer(ref, "unknown resource type '#{type_name}'") if type.nil?

  ref = ref_of(type.name, title)
  params = params.reject do |k, _|
    ORDERING.include?(k.to_s) && (Puppet.debug("#{ref}: metaparameter '#{k}' ignored; ordering belongs to the caller") || true)
  end
  # The parameters whose values are secrets, as a catalog lists them:
  # Puppet's type then redacts their values, diffs and output.
  sensitive = params.delete('sensitive_parameters')
  begin
    resource = Puppet::Resource.new(type.name, title, parameters: params)
    resource.sensitive_parameters = [sensitive].flatten.map(&:to_sym) if sensitive
    ral = resource.to_ral
  rescue Puppet::Error, ArgumentError, TypeError => e
    return error_answer(ref, e.message)
  end
  ref = ral.ref
  catalog = Puppet::Resource::Catalog.new(nil, env)
  catalog.add_resource(ral)
  given = [ref]
  # The run's resources, seen (what Puppet could not make of them by name
  # only: a purge leaves it).
  see_run(catalog, seen_cat, left_refs) if seen_cat
  errors.messages.clear
  # catalog.apply, without its state file (Puppet::Util::Storage): the
  # caller owns schedules and history, and a state.yaml shared with the
  # machine's agent must not be rewritten per resource.
  transaction = Puppet::Transaction.new(catalog, nil, Puppet::Graph::SequentialPrioritizer.new)
  PippetRunWatch.seen = seen
  PippetRunWatch.touched = []
  begin
    transaction.report.as_logging_destination { transaction.evaluate }
  ensure
    touched = PippetRunWatch.touched
    PippetRunWatch.seen = nil
    PippetRunWatch.touched = nil
  end
  status = transaction.report.resource_statuses[ref]
  events = status ? status.events.map { |e| event_hash(e) } : []
  failed = status.nil? || status.failed || status.failed_to_restart ? true : false
  changed = status && status.changed ? true : false
  noop = ral.noop? ? true : false
  # What Puppet generated (a concat_file's File, a purge's removals):
  # events whose property names the resource, for the caller's report.
  transaction.report.resource_statuses.each do |gref, gs|
    next if given.include?(gref) || gref !~ /\A[A-Z][\w:]*\[.*\]\z/m
    # One marker, property "REF/" and no change, for a generated resource
    # that had nothing to do: the caller reports it unchanged.
    events << { 'property' => "#{gref}/", 'message' => '', 'status' => 'unchanged' } if gs.events.empty?
    gs.events.each do |e|
      h = event_hash(e)
      h['property'] = "#{gref}/#{h['property']}"
      events << h
    end
    changed ||= gs.changed ? true : false
    failed ||= gs.failed ? true : false
  end

  if req['refresh'] == true && !failed && ral.respond_to?(:refresh)
    if noop
      events << { 'property' => 'refresh', 'message' => "Would have triggered 'refresh' from 1 event", 'status' => 'noop' }
    else
      begin
        ral.refresh
        # Logged as Puppet's event manager logs it, on the resource.
        ral.notice("Triggered 'refresh' from 1 event")
        events << { 'property' => 'refresh', 'message' => "Triggered 'refresh' from 1 event", 'status' => 'success' }
        changed = true
      rescue StandardError => e
        Puppet.err("#{ref}: Failed to call refresh: #{e.message}")
        failed = true
      end
    end
  end

  exception = nil
  if failed
    # The failure events' messages, then what was logged at err level and
    # is not already said (a Resource API provider's event only says
    # "Execution encountered an error"; its log says what the error was).
    said = events.select { |e| e['status'] == 'failure' }.map { |e| e['message'] }
    errors.messages.each do |m|
      said << m unless said.any? { |s| s.include?(m) || m.include?(s) }
    end
    exception = said.empty? ? "#{ref} failed" : said.join('; ')
  end
  h = { 'resource' => ref, 'failed' => failed, 'changed' => changed, 'noop' => noop,
        'error' => false, 'exception' => exception }
  h['events'] = events unless events.empty?
  changes = run_changes(touched)
  h['run_changes'] = changes unless changes.empty?
  # The provider Puppet chose, for the run's report (provider_used).
  h['provider'] = ral.provider.class.name.to_s if ral.respond_to?(:provider) && ral.provider
  h
end

# The read verbs ({"op":"find",...}, {"op":"search",...}), as `puppet
# resource TYPE [NAME]` reads: Puppet::Resource's RAL terminus, the
# provider's instances (a find of a name no instance has is the resource
# as its provider reads it, every property audited). The answer is the
# receiver's: "state" (ensure first, the rest by name, as `puppet
# resource` prints them, pruned as it prunes them; symbols as strings) and "params" (the state as a
# JSON object, which is YAML) for a find, "instances" (title and state,
# sorted by title) for a search. A search's params are conditions on the
# instances' values, compared as strings, as Puppet compares them.
def state_of(resource)
  # What `puppet resource` prints: the properties, the namevar and the
  # provider; empty and absent values left out (ensure's kept).
  resource = resource.prune_parameters(parameters_to_include: [:provider])
  h = resource.to_hash.reject { |k, _| k == :name && resource.to_hash[:name].to_s == resource.title.to_s }
  keys = h.keys.map(&:to_s).sort
  keys.unshift(keys.delete('ensure')) if keys.include?('ensure')
  keys.to_h { |k| [k, plain(h[k.to_sym])] }
end

def plain(v)
  case v
  when Symbol then v.to_s
  when Array then v.map { |x| plain(x) }
  when Hash then v.to_h { |k, x| [k.to_s, plain(x)] }
  when String, Integer, Float, true, false, nil then v
  else v.to_s
  end
end

def read_one(req)
  type_name = req['type']
  return error_answer(nil, 'invalid request: type must be a string') unless type_name.is_a?(String)

  type = Puppet::Type.type(type_name.downcase)
  return error_answer(ref_of(type_name, req['title'].to_s), "unknown resource type '#{type_name}'") if type.nil?

  params = req['params']
  params = YAML.safe_load(params) || {} if params.is_a?(String)
  params = {} if params.nil?
  if req['op'] == 'search'
    found = Puppet::Resource.indirection.search(type.name.to_s, params.transform_keys(&:to_sym))
    instances = found.map { |r| { 'title' => r.title.to_s, 'state' => state_of(r) } }
    return { 'resource' => ref_of(type.name, '').chomp('[]'), 'failed' => false, 'changed' => false, 'noop' => false,
             'error' => false, 'exception' => nil, 'instances' => instances }
  end
  title = req['title']
  return error_answer(ref_of(type.name, ''), 'invalid request: find needs a title') unless title.is_a?(String) && !title.empty?

  ref = ref_of(type.name, title)
  begin
    found = Puppet::Resource.indirection.find("#{type.name}/#{title}")
  rescue Puppet::Error, ArgumentError, TypeError => e
    return error_answer(ref, e.message)
  end
  state = state_of(found)
  { 'resource' => ref, 'failed' => false, 'changed' => false, 'noop' => false, 'error' => false,
    'exception' => nil, 'state' => state, 'params' => JSON.generate(state) }
end

# The autorelationships of the delegated types ({"op":"autorelations",
# "resources":[{"type","title","params","ask"}...]}): the catalog's
# resources made into Puppet's (those Puppet cannot make with their
# params go bare, those it cannot make at all are left out; a class or a
# defined type is a component, as in Puppet's catalog), then each one
# marked "ask" says its autorequire, autobefore, autosubscribe and
# autonotify edges against that catalog, as Puppet's relationship graph
# asks them. The answer's "edges" lists {"source","target","refresh",
# "kind"} by the resources' references; the caller adds them where no
# written relationship says otherwise.
AUTO_KINDS = %i[require subscribe before notify].freeze

def auto_relations(env, req)
  list = req['resources']
  return error_answer('Autorelations[catalog]', 'invalid autorelations request: resources must be a list') unless list.is_a?(Array)

  catalog = Puppet::Resource::Catalog.new(nil, env)
  ask = []
  list.each do |c|
    next unless c.is_a?(Hash) && c['type'].is_a?(String) && c['title'].is_a?(String)
    params = (c['params'].is_a?(Hash) ? c['params'] : {}).reject { |k, _| ORDERING.include?(k.to_s) }
    r = nil
    [params, {}].uniq.each do |p|
      r = Puppet::Resource.new(c['type'], c['title'], parameters: p).to_ral
      break
    rescue Puppet::Error, ArgumentError, TypeError, StandardError
      r = nil
    end
    next if r.nil? || catalog.resource(r.ref)
    catalog.add_resource(r)
    ask << r if c['ask'] == true
  end
  edges = []
  ask.each do |r|
    # A purging `resources` is asked for the autorelationships of what
    # its purge generates (each instance its catalog does not manage, to
    # be removed), as Puppet's graph has them for the generated resources
    # (firewall's autorequire of its package): the bridge applies the
    # purge as one request, so they are the resources's own.
    own = [r]
    if r.is_a?(Puppet::Type.type(:resources))
      begin
        own = r.generate || []
      rescue StandardError => e
        Puppet.warning("#{r.ref}: the resources its purge would remove not read: #{e.message}")
        own = []
      end
    end
    own.each do |g|
      AUTO_KINDS.each do |kind|
        g.send("auto#{kind}", catalog).each do |rel|
          src = rel.source.equal?(g) ? r : rel.source
          dst = rel.target.equal?(g) ? r : rel.target
          edges << { 'source' => src.ref, 'target' => dst.ref,
                     'refresh' => %i[subscribe notify].include?(kind), 'kind' => kind.to_s }
        end
      rescue StandardError => e
        Puppet.warning("#{g.ref}: auto#{kind}: #{e.message}")
      end
    end
  end
  edges.uniq!
  { 'resource' => 'Autorelations[catalog]', 'failed' => false, 'changed' => false, 'noop' => false,
    'error' => false, 'exception' => nil, 'edges' => edges }
end

# The custom facts of an agent's run ({"op":"facts","dirs":[...]}, the
# fact files to evaluate after the directories when pippet resolves the
# others natively: pippet_custom_facts, internal/factsrb): the Ruby facts
# pluginsync brought, evaluated by the Facter this Puppet has
# loaded, as Puppet's agent evaluates them in its own process (facts that
# ask Puppet for its settings see them). Facter starts afresh (reset) for
# each request, so a file pluginsync changed since is read again. External
# facts are not loaded here: the caller reads them itself and applies
# Facter's precedence; the facts Puppet adds of its own (puppetversion,
# agent_specified_environment) are the caller's too. The answer is a
# result line whose "facts" member maps each custom fact with a value to
# its value and its resolution's weight, and whose "errors" lists what
# Facter said at error level (a fact file that raised, a resolution that
# failed).
PUPPET_OWN_FACTS = %w[puppetversion agent_specified_environment].freeze

def custom_facts(req)
  dirs = req['dirs']
  unless dirs.is_a?(Array) && dirs.all? { |d| d.is_a?(String) }
    return error_answer('Facts[custom]', 'invalid facts request: dirs must be a list of strings')
  end

  errors = []
  out = {}
  facter = Puppet.runtime[:facter]
  external = Facter::Options[:external_facts]
  Facter.on_message { |level, message| errors << message.to_s if %i[error fatal].include?(level) }
  begin
    facter.reset
    Puppet.initialize_facts
    Facter::Options[:no_external_facts] = true
    out = pippet_custom_facts(dirs, errors, PUPPET_OWN_FACTS)
  ensure
    Facter::Options[:no_external_facts] = !external
    # Facter's messages go to Puppet's log again, as Puppet set them up.
    facter.respond_to?(:setup_logging, true) ? facter.send(:setup_logging) : Facter.on_message
  end
  { 'resource' => 'Facts[custom]', 'failed' => false, 'changed' => false, 'noop' => false,
    'error' => false, 'exception' => nil, 'facts' => out, 'errors' => errors }
end

Puppet.initialize_settings(ARGV)
# Facts as Puppet's applications set them up: the core facts
# (puppetversion, which providers test to pick their code path) and the
# custom facts of the modulepath's modules.
Puppet.initialize_facts
Puppet[:color] = false
Puppet::Util::Log.newdestination(:pippet_stderr)
Puppet::Util::Log.level = Puppet[:log_level].to_sym
Puppet::Util::Log.level = :debug if Puppet[:debug]
errors = PippetErrors.new
Puppet::Util::Log.newdestination(errors)

environments = Puppet.lookup(:environments)
env = environments.get(Puppet[:environment])
unless env
  base = Puppet::Node::Environment.split_path(Puppet[:basemodulepath])
  env = Puppet::Node::Environment.create(Puppet[:environment].to_sym, base, Puppet::Node::Environment::NO_MANIFEST)
end
env = env.override_from_commandline(Puppet.settings)
fact_dirs = env.modules.map { |m| File.join(m.path, 'lib', 'facter') }.select { |d| File.directory?(d) }
Puppet.runtime[:facter].search(*fact_dirs) unless fact_dirs.empty?

Puppet.override(current_environment: env, loaders: Puppet::Pops::Loaders.new(env), stringify_rich: true) do
  answer(answers, 'ready' => true, 'protocol' => 2, 'bridge' => 'pippet-bridge', 'puppet' => Puppet.version, 'pid' => Process.pid)
  $stdin.each_line do |line|
    next if line.strip.empty? || line.lstrip.start_with?('#')
    h = begin
      req = JSON.parse(line)
      raise JSON::ParserError, 'not a JSON object' unless req.is_a?(Hash)
      case req['op']
      when 'facts' then custom_facts(req)
      when 'find', 'search' then read_one(req)
      when 'autorelations' then auto_relations(env, req)
      when 'catalog' then run_catalog(env, req)
      else apply_one(env, req, errors)
      end
    rescue JSON::ParserError => e
      error_answer(nil, "invalid request: #{e.message}")
    rescue Exception => e # rubocop:disable Lint/RescueException
      raise if e.is_a?(SystemExit) || e.is_a?(Interrupt) || e.is_a?(SignalException)
      ref = req.is_a?(Hash) && req['type'].is_a?(String) && req['title'].is_a?(String) ? ref_of(req['type'], req['title']) : nil
      Puppet.log_exception(e, "#{ref || 'request'}: #{e.class}: #{e.message}")
      error_answer(ref, "#{e.class}: #{e.message}")
    end
    # The request's id comes back, so the receiver can tell an answer out
    # of step with its request (the runner numbers the requests).
    h['id'] = req['id'] if req.is_a?(Hash) && req.key?('id')
    # Every line logged for this request is on stderr before its answer
    # is on stdout, and this line says so: the receiver waits for it, so
    # that the request's log comes in its place (before the next
    # resource's, before the run's summary, in the run's report).
    $stderr.write("Pippet-Answered: #{JSON.generate(h['id'])}\n") if h.key?('id')
    answer(answers, h)
  end
end
