require 'puppet/resource_api/simple_provider'

# Reads and writes the note's file.
class Puppet::Provider::PippetNote::PippetNote < Puppet::ResourceApi::SimpleProvider
  def get(_context, names = nil)
    (names || []).map do |n|
      File.exist?(n) ? { name: n, ensure: 'present', text: File.read(n) } : { name: n, ensure: 'absent' }
    end
  end

  def create(_context, name, should)
    File.write(name, should[:text].to_s)
  end

  def update(_context, name, should)
    File.write(name, should[:text].to_s)
  end

  def delete(_context, name)
    File.delete(name)
  end
end
