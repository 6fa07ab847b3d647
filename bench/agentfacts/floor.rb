# floor.rb: the Ruby work an agent run cannot avoid when its modules ship
# custom facts: start Ruby, load Puppet (the facts require it), and
# evaluate the custom facts of the directories given, as the run's one
# Puppet does (delegate/pippet-bridge.rb's facts request) and as Puppet's
# own agent does inside its fact_generation. Prints each part's seconds.
#
#   ruby -I LIBDIR -I /usr/lib/ruby/vendor_ruby bench/agentfacts/floor.rb LIBDIR/facter...
t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
lap = ->(what) { $stderr.puts format('%-24s %.3f s', what, Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0) }
require 'puppet'
Puppet.initialize_settings([])
lap.call('Ruby and Puppet loaded')
facter = Puppet.runtime[:facter]
facter.reset
Puppet.initialize_facts
Facter::Options[:no_external_facts] = true
facter.search(*ARGV)
n = 0
LegacyFacter.collection.custom_facts.each_value { |f| f.value; n += 1 }
lap.call("#{n} custom facts")
