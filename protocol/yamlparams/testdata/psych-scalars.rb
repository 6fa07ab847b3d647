# Regenerates psych-scalars.json: how Ruby's Psych (as Puppet 7 loads
# YAML: safe_load, aliases allowed) reads "a: SCALAR" for each scalar.
#   ruby -rjson -e 'puts JSON.generate(JSON.parse(File.read("psych-scalars.json")).map(&:first))' > /tmp/s.json
#   ruby psych-scalars.rb /tmp/s.json > psych-scalars.json
require 'yaml'; require 'json'
out = []
JSON.parse(File.read(ARGV[0])).each do |s|
  doc = "a: " + s + "\n"
  begin
    v = YAML.safe_load(doc, permitted_classes: [], aliases: true)
    x = v["a"]
    r = case x
        when Integer then (x.bit_length < 64 ? ["int", x.to_s] : ["bigint", x.to_s])
        when Float then ["float", x.nan? ? "nan" : (x.infinite? ? (x > 0 ? "inf" : "-inf") : x.to_s)]
        when String then ["str", x]
        when true, false then ["bool", x.to_s]
        when nil then ["nil", ""]
        else ["other", x.class.to_s]
        end
  rescue Exception => e
    r = ["error", e.class.to_s]
  end
  out << [s, r]
end
puts "[\n" + out.map { |r| JSON.generate(r) }.join(",\n") + "\n]"
