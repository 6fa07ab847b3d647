# A custom type for pippet's tests of the autorelationships a delegated
# type declares in Ruby: each change appends a line to `log` saying
# whether the file `after` existed then; a refresh appends one too.
Puppet::Type.newtype(:pippet_mark) do
  @doc = 'A mark in a log file, for tests.'

  # Ensurable so that `resources { pippet_mark: purge => true }` is
  # allowed; never given in the tests, so never managed.
  ensurable do
    defaultvalues
  end

  newparam(:name, namevar: true)

  newparam(:log) do
    desc 'The log file (absolute path).'
  end

  newparam(:after) do
    desc 'A file this mark autorequires.'
  end

  newparam(:listen) do
    desc 'A pippet_mark this mark autosubscribes to.'
  end

  newparam(:ahead) do
    desc 'A file this mark autobefores.'
  end

  newparam(:after_class) do
    desc 'A class this mark autorequires (as postgresql_psql its service class).'
  end

  newparam(:peek) do
    desc 'A file whose presence the mark logs, with no relationship to it.'
  end

  newproperty(:mark) do
    desc 'Always out of sync: every run marks.'
    defaultto 'x'
  end

  # $PIPPET_MARK_TOOL: a file every mark autorequires, as firewall its
  # package (the marks a purge removes too).
  autorequire(:file) { [self[:after], ENV['PIPPET_MARK_TOOL']].compact }
  autorequire(:class) { self[:after_class] }
  autosubscribe(:pippet_mark) { self[:listen] }
  autobefore(:file) { self[:ahead] }

  def refresh
    provider.refresh
  end
end
